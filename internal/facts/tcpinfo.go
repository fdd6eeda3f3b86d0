package facts

// TCPSocket is one TCP connection as `ss -tin` shows it: the kernel's
// tcp_info of a flow at one moment. Sizes are bytes, times milliseconds,
// rates bits per second; 0 where ss did not print the field (older kernels
// and idle sockets leave many out).
type TCPSocket struct {
	Local string `json:"local"` // address:port ([v6]:port), as ss printed it
	Peer  string `json:"peer"`
	// RecvQ and SendQ are the bytes queued unread and unacknowledged.
	RecvQ int64 `json:"recv_q"`
	SendQ int64 `json:"send_q"`
	// Congestion is the sender's algorithm (bbr, cubic, reno).
	Congestion string `json:"congestion,omitempty"`
	// MSS is the segment size in use, PMTU the route's MTU the socket sees,
	// AdvMSS the MSS it announced.
	MSS    int `json:"mss,omitempty"`
	PMTU   int `json:"pmtu,omitempty"`
	AdvMSS int `json:"advmss,omitempty"`
	// Cwnd is the congestion window in segments.
	Cwnd     int64   `json:"cwnd,omitempty"`
	Ssthresh int64   `json:"ssthresh,omitempty"`
	RTTMs    float64 `json:"rtt_ms,omitempty"`
	MinRTTMs float64 `json:"min_rtt_ms,omitempty"`
	// Retrans is the segments retransmitted over the connection's life.
	Retrans       int64 `json:"retrans,omitempty"`
	BytesAcked    int64 `json:"bytes_acked,omitempty"`
	BytesReceived int64 `json:"bytes_received,omitempty"`
	// SndWnd is the window the peer advertises; RcvSpace the receive
	// window the kernel's autotuning has grown to; RcvWnd the window this
	// end advertises (ss 6.2 and later).
	SndWnd   int64 `json:"snd_wnd,omitempty"`
	RcvSpace int64 `json:"rcv_space,omitempty"`
	RcvWnd   int64 `json:"rcv_wnd,omitempty"`
	// PacingRate and DeliveryRate are in bits per second.
	PacingRate   float64 `json:"pacing_rate_bps,omitempty"`
	DeliveryRate float64 `json:"delivery_rate_bps,omitempty"`
	// BusyMs is how long the connection has had data to send; of it,
	// RwndLimitedMs waited for the peer's receive window and
	// SndbufLimitedMs for this end's send buffer (the rest the congestion
	// window limited).
	BusyMs          int64 `json:"busy_ms,omitempty"`
	RwndLimitedMs   int64 `json:"rwnd_limited_ms,omitempty"`
	SndbufLimitedMs int64 `json:"sndbuf_limited_ms,omitempty"`
	AppLimited      bool  `json:"app_limited,omitempty"`
}
