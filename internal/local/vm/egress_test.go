package vm

import (
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// TestAnswerEgressName answers a name of an egress destination with its addresses, whatever its
// case, and refuses any other name.
func TestAnswerEgressName(t *testing.T) {
	names := map[string][]netip.Addr{"vcenter.example.com": {netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("203.0.113.9")}}
	ask := func(name string, typ dnsmessage.Type) dnsmessage.Message {
		t.Helper()
		q := dnsmessage.Message{Header: dnsmessage.Header{ID: 42, RecursionDesired: true},
			Questions: []dnsmessage.Question{{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET}}}
		raw, err := q.Pack()
		if err != nil {
			t.Fatal(err)
		}
		reply, err := answerEgressName(raw, names)
		if err != nil {
			t.Fatal(err)
		}
		var m dnsmessage.Message
		if err := m.Unpack(reply); err != nil {
			t.Fatal(err)
		}
		if m.ID != 42 || !m.Response || len(m.Questions) != 1 {
			t.Errorf("%s: reply header %+v, questions %v", name, m.Header, m.Questions)
		}
		return m
	}
	m := ask("VCenter.Example.com.", dnsmessage.TypeA)
	var got []string
	for _, a := range m.Answers {
		got = append(got, netip.AddrFrom4(a.Body.(*dnsmessage.AResource).A).String())
	}
	if m.RCode != dnsmessage.RCodeSuccess || strings.Join(got, " ") != "203.0.113.7 203.0.113.9" {
		t.Errorf("A of the egress name: %v %v", m.RCode, got)
	}
	if m := ask("vcenter.example.com.", dnsmessage.TypeAAAA); m.RCode != dnsmessage.RCodeSuccess || len(m.Answers) != 0 {
		t.Errorf("AAAA of the egress name: %v %v, want no address and no error", m.RCode, m.Answers)
	}
	if m := ask("other.example.com.", dnsmessage.TypeA); m.RCode != dnsmessage.RCodeRefused || len(m.Answers) != 0 {
		t.Errorf("another name: %v %v, want refused", m.RCode, m.Answers)
	}
	// A response is not answered (two responders would echo each other); a query without a
	// question gets a format error at once.
	response, _ := (&dnsmessage.Message{Header: dnsmessage.Header{ID: 7, Response: true}}).Pack()
	if reply, err := answerEgressName(response, names); err == nil {
		t.Errorf("a response was answered: %v", reply)
	}
	empty, _ := (&dnsmessage.Message{Header: dnsmessage.Header{ID: 8}}).Pack()
	reply, err := answerEgressName(empty, names)
	var m2 dnsmessage.Message
	if err != nil || m2.Unpack(reply) != nil || m2.RCode != dnsmessage.RCodeFormatError || m2.ID != 8 {
		t.Errorf("a query without a question: %v %+v, want a format error", err, m2.Header)
	}
}
