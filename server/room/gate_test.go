package room

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestGateValidate(t *testing.T) {
	long := "https://shop.example/" + strings.Repeat("a", MaxTargetURLLen)
	many := make([]string, MaxProtect+1)
	for i := range many {
		many[i] = "/p"
	}
	tests := []struct {
		name  string
		mut   func(*Gate)
		field string // "" when valid
	}{
		{"defaults", func(*Gate) {}, ""},
		{"zero values mean the defaults", func(g *Gate) { *g = Gate{} }, ""},
		{"a shop page", func(g *Gate) { g.TargetURL = "https://shop.example:8443/checkout?x=1" }, ""},
		{"plain http", func(g *Gate) { g.TargetURL = "http://127.0.0.1:9000/" }, ""},
		{"relative", func(g *Gate) { g.TargetURL = "/checkout" }, "targetURL"},
		{"no host", func(g *Gate) { g.TargetURL = "https:///checkout" }, "targetURL"},
		{"javascript", func(g *Gate) { g.TargetURL = "javascript:alert(1)" }, "targetURL"},
		{"ftp", func(g *Gate) { g.TargetURL = "ftp://shop.example/" }, "targetURL"},
		{"user info", func(g *Gate) { g.TargetURL = "https://u:p@shop.example/" }, "targetURL"},
		{"fragment", func(g *Gate) { g.TargetURL = "https://shop.example/#top" }, "targetURL"},
		{"empty fragment", func(g *Gate) { g.TargetURL = "https://shop.example/#" }, "targetURL"},
		{"control character", func(g *Gate) { g.TargetURL = "https://shop.example/\n" }, "targetURL"},
		{"too long", func(g *Gate) { g.TargetURL = long }, "targetURL"},
		{"shortest session", func(g *Gate) { g.SessionSeconds = MinSessionSeconds }, ""},
		{"longest session", func(g *Gate) { g.SessionSeconds = MaxSessionSeconds }, ""},
		{"session too short", func(g *Gate) { g.SessionSeconds = MinSessionSeconds - 1 }, "sessionSeconds"},
		{"session too long", func(g *Gate) { g.SessionSeconds = MaxSessionSeconds + 1 }, "sessionSeconds"},
		{"negative session", func(g *Gate) { g.SessionSeconds = -1 }, "sessionSeconds"},
		{"fixed", func(g *Gate) { g.SessionMode = SessionFixed }, ""},
		{"unknown mode", func(g *Gate) { g.SessionMode = "sliding" }, "sessionMode"},
		{"prefixes", func(g *Gate) { g.Protect = []string{"/checkout", "/cart/", "/"} }, ""},
		{"too many prefixes", func(g *Gate) { g.Protect = many }, "protect"},
		{"prefix without slash", func(g *Gate) { g.Protect = []string{"checkout"} }, "protect"},
		{"protocol-relative prefix", func(g *Gate) { g.Protect = []string{"//evil.example"} }, "protect"},
		{"climbing prefix", func(g *Gate) { g.Protect = []string{"/a/../b"} }, "protect"},
		{"prefix with a query", func(g *Gate) { g.Protect = []string{"/checkout?step=1"} }, "protect"},
		{"prefix with a space", func(g *Gate) { g.Protect = []string{"/check out"} }, "protect"},
		{"long prefix", func(g *Gate) { g.Protect = []string{"/" + strings.Repeat("a", MaxProtectLen)} }, "protect"},
		{"key hash", func(g *Gate) { g.APIKeyHash = strings.Repeat("ab", 32) }, ""},
		{"key hash in upper case", func(g *Gate) { g.APIKeyHash = strings.Repeat("AB", 32) }, "apiKeyHash"},
		{"short key hash", func(g *Gate) { g.APIKeyHash = "abcd" }, "apiKeyHash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := DefaultGate()
			tt.mut(&g)
			errs := g.FieldErrors()
			err := g.Validate()
			if tt.field == "" {
				if errs != nil || err != nil {
					t.Fatalf("refused: %v %v", errs, err)
				}
				return
			}
			if len(errs) != 1 || errs[tt.field] == nil {
				t.Fatalf("field errors %v, want one on %s", errs, tt.field)
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.field+": ") {
				t.Fatalf("Validate = %v, want an error naming %s", err, tt.field)
			}
			// The room's settings refuse it too.
			s := Defaults("r")
			s.Gate = g
			if s.Validate() == nil {
				t.Fatal("the room's settings accepted it")
			}
		})
	}
}

func TestGateSessionAndAudience(t *testing.T) {
	tests := []struct {
		g       Gate
		seconds int
		mode    string
		aud     string
	}{
		{Gate{}, DefaultSessionSeconds, SessionIdle, ""},
		{Gate{TargetURL: "https://Shop.Example:8443/checkout?x=1", SessionSeconds: 60, SessionMode: SessionFixed}, 60, SessionFixed, "https://shop.example:8443"},
		{Gate{TargetURL: "http://127.0.0.1/"}, DefaultSessionSeconds, SessionIdle, "http://127.0.0.1"},
	}
	for _, tt := range tests {
		sec, mode := tt.g.Session()
		if sec != tt.seconds || mode != tt.mode || tt.g.Audience() != tt.aud {
			t.Errorf("%+v: session %d %s, audience %q; want %d %s %q", tt.g, sec, mode, tt.g.Audience(), tt.seconds, tt.mode, tt.aud)
		}
	}
}

// TestGatePatch: the admin API's JSON sets the gate's fields, but never
// the API key's hash, and fields left out keep their value.
func TestGatePatch(t *testing.T) {
	s := Defaults("r")
	s.APIKeyHash = strings.Repeat("0", 64)
	var p Patch
	body := `{"targetURL":"https://shop.example/buy","sessionSeconds":120,"sessionMode":"fixed","failOpen":true,"protect":["/checkout"]}`
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatal(err)
	}
	got := p.Apply(s).Gate
	want := Gate{TargetURL: "https://shop.example/buy", SessionSeconds: 120, SessionMode: SessionFixed, FailOpen: true,
		Protect: []string{"/checkout"}, APIKeyHash: s.APIKeyHash}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("patched %+v, want %+v", got, want)
	}
	if again := (Patch{}).Apply(p.Apply(s)).Gate; !reflect.DeepEqual(again, want) {
		t.Fatalf("an empty patch changed the gate: %+v", again)
	}
	d := json.NewDecoder(strings.NewReader(`{"apiKeyHash":"` + strings.Repeat("1", 64) + `"}`))
	d.DisallowUnknownFields()
	if err := d.Decode(&p); err == nil {
		t.Fatal("a patch set the API key's hash")
	}
}
