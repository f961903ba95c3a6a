package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

func TestCheckHost(t *testing.T) {
	tests := []struct {
		host string
		want string // "" when allowed, else the error's start
	}{
		{"169.254.169.254", "169.254.169.254 is a link-local/metadata address"},
		{"169.254.0.1", "169.254.0.1 is a link-local/metadata address"},
		{"[::ffff:169.254.169.254]", "169.254.169.254 is a link-local/metadata address"},
		{"::ffff:a9fe:a9fe", "169.254.169.254 is a link-local/metadata address"},
		{"2852039166", "2852039166 reads as 169.254.169.254, a link-local/metadata address"},
		{"0xa9fea9fe", "0xa9fea9fe reads as 169.254.169.254, a link-local"},
		{"0251.0376.0251.0376", "0251.0376.0251.0376 reads as 169.254.169.254, a link-local"},
		{"169.254.43518", "169.254.43518 reads as 169.254.169.254, a link-local"},
		{"169.254.169.254.", "169.254.169.254 is a link-local"},
		{"fe80::1", "fe80::1 is a link-local/metadata address"},
		{"[fe80::1%eth0]", "fe80::1 is a link-local"},
		{"[fd00:ec2::254]", "fd00:ec2::254 is a metadata address (AWS, IPv6)"},
		{"100.100.100.200", "100.100.100.200 is a metadata address (Alibaba Cloud)"},
		{"metadata.google.internal", "metadata.google.internal is a metadata address"},
		{"METADATA.google.internal.", "METADATA.google.internal. is a metadata address"},
		{"0.0.0.0", "0.0.0.0 is an unspecified address"},
		{"0", "0 reads as 0.0.0.0, an unspecified address"},
		{"[::]", ":: is an unspecified address"},
		{"224.0.0.1", "224.0.0.1 is a multicast address"},
		{"[ff02::1]", "ff02::1 is a multicast address"},
		{"255.255.255.255", "255.255.255.255 is the broadcast address"},
		// A shop's health endpoint is usually internal.
		{"127.0.0.1", ""},
		{"[::1]", ""},
		{"localhost", ""},
		{"10.0.0.5", ""},
		{"172.16.3.4", ""},
		{"192.168.1.10", ""},
		{"[fd12:3456::1]", ""},
		{"100.64.0.1", ""},
		{"shop.internal", ""},
		{"shop.example", ""},
		{"2130706433", ""}, // 127.0.0.1
		{"1.2.3.4.5", ""},  // a name, not an address
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			err := CheckHost(tt.host)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, ErrRefused)):
				t.Fatalf("error %v, want one starting %q", err, tt.want)
			}
		})
	}
}

// TestControlRefusesDials dials through a Dialer with Control: every
// refused address fails before a connection is made, in any form, and a
// name that resolves to one (DNS rebinding) fails too; loopback connects.
func TestControlRefusesDials(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dns := fakeDNS(t, map[string]netip.Addr{
		"metadata.test.":  netip.MustParseAddr("169.254.169.254"),
		"rebinding.test.": netip.MustParseAddr("169.254.10.1"),
		"shop.test.":      netip.MustParseAddr("127.0.0.1"),
	})
	d := &net.Dialer{Control: Control, Resolver: &net.Resolver{PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "udp", dns)
		}}}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	tests := []struct {
		network, address string
		refused          bool
	}{
		{"tcp", "169.254.169.254:80", true},
		{"tcp", "[::ffff:169.254.169.254]:80", true},
		{"tcp4", "169.254.1.2:443", true},
		{"tcp", "[fe80::1]:80", true},
		{"tcp", "100.100.100.200:80", true},
		{"tcp", "[fd00:ec2::254]:80", true},
		{"tcp", "0.0.0.0:" + port, true},
		{"tcp", "[::]:" + port, true},
		{"tcp", "224.0.0.1:80", true},
		{"tcp", "metadata.test:80", true},
		{"tcp", "rebinding.test:" + port, true},
		{"tcp", "127.0.0.1:" + port, false},
		{"tcp", "shop.test:" + port, false},
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			c, err := d.DialContext(t.Context(), tt.network, tt.address)
			if c != nil {
				c.Close()
			}
			if tt.refused != errors.Is(err, ErrRefused) || (!tt.refused && err != nil) {
				t.Fatalf("dial: %v, want refused %v", err, tt.refused)
			}
		})
	}
}

// fakeDNS answers A queries for names from a UDP listener on loopback,
// and returns its address.
func fakeDNS(t *testing.T, names map[string]netip.Addr) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
			b.StartQuestions()
			b.Question(q)
			b.StartAnswers()
			if a, ok := names[strings.ToLower(q.Name.String())]; ok && q.Type == dnsmessage.TypeA {
				b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: a.As4()})
			}
			out, err := b.Finish()
			if err == nil {
				pc.WriteTo(out, from)
			}
		}
	}()
	return pc.LocalAddr().String()
}
