package check

import "testing"

func TestDropReasonFindingsAreInTheCatalog(t *testing.T) {
	for reason, ids := range DropReasonFindings {
		if _, noise := dropNoise[reason]; len(ids) == 0 || noise {
			t.Errorf("%s: names no finding, or is noise too", reason)
		}
		for _, id := range ids {
			if _, ok := Lookup(id); !ok {
				t.Errorf("%s: %s is not in the catalog", reason, id)
			}
		}
	}
}

// NO_SOCKET is noise in TCP's receive (segments of a closed connection, the
// bench's own among them) and evidence in UDP's (a tunnel sent to a port
// nobody listens on).
func TestDropNoise(t *testing.T) {
	for _, c := range []struct {
		reason, function string
		noise            bool
	}{
		{"NO_SOCKET", "tcp_v4_rcv", true},
		{"NO_SOCKET", "tcp_v6_rcv", true},
		{"NO_SOCKET", "__udp4_lib_rcv", false},
		{"TCP_CLOSE", "tcp_rcv_state_process", true},
		{"SOCKET_RCVBUFF", "__udp_enqueue_schedule_skb", false},
	} {
		if got := DropNoise(c.reason, c.function); got != c.noise {
			t.Errorf("%s in %s: noise %v, want %v", c.reason, c.function, got, c.noise)
		}
	}
}
