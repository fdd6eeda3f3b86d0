package target

// A Spec is also the identity of a host wherever wgperf records or compares
// one: a finding's host, a snapshot's, a fleet host's target. Same says
// whether two specs name one host, and a Spec marshals to the text it was
// written as, so documents keep the string they always carried, and is
// parsed (validated) again when read back.

// Same reports whether s and o name the same host: the same kind and the
// same parsed address, however each was spelled ("" and "local";
// "ssh:[fd00::1]" and "ssh:fd00::1"; "ssh:[h]:22" and "ssh:h:22"). A user
// or port left out is left to the ssh config, which may set one, so
// "ssh:h" and "ssh:root@h:22" are not the same spec. Specs of no kind (the
// zero Spec, a stand-in target's Of) are the same only when written alike.
func (s Spec) Same(o Spec) bool { return s.Key() == o.Key() }

// Equal is Same, under the name go-cmp (and other comparers) look for.
func (s Spec) Equal(o Spec) bool { return s.Same(o) }

// Key is a host's identity as a comparable value, for a map that groups by
// host: two specs have the same Key when they are Same.
type Key struct {
	kind *Kind
	addr any    // the kind's parsed address, comparable
	text string // for a spec of no kind only
}

// Key is s's identity (Same).
func (s Spec) Key() Key {
	if s.kind == nil {
		return Key{text: s.text}
	}
	return Key{kind: s.kind, addr: s.addr}
}

// IsZero reports whether s names no host: the zero Spec, as an absent host
// in a document unmarshals.
func (s Spec) IsZero() bool { return s.kind == nil && s.text == "" }

// Of is the spec of an open target, for a document to record and compare:
// a Target's String is the spec it was opened from. A target whose String
// parses as no spec (a test's stand-in) gives a Spec of that text and no
// kind, which opens nothing and is Same only as itself.
func Of(t Target) Spec {
	text := t.String()
	if s, err := ParseSpec(text); err == nil {
		return s
	}
	return Spec{text: text}
}

// MustParseSpec is ParseSpec for a spec written in wgperf's own source (a
// test's, a fixed lab name): it panics on an error.
func MustParseSpec(text string) Spec {
	s, err := ParseSpec(text)
	if err != nil {
		panic(err)
	}
	return s
}

// MarshalText writes the spec as written; the zero Spec is "".
func (s Spec) MarshalText() ([]byte, error) { return []byte(s.text), nil }

// UnmarshalText parses a spec read from a document (a findings file, a
// snapshot, an inventory list): "" is the zero Spec, no host, which the
// document's reader refuses where a host is required; anything else must
// parse, and ParseSpec's error, one line, quotes the text.
func (s *Spec) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*s = Spec{}
		return nil
	}
	v, err := ParseSpec(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
