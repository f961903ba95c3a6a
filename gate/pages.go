package gate

import (
	"encoding/json"
	"html/template"
	"net/http"
	"strconv"
	"strings"
)

// pageKind names one of the gate's pages.
type pageKind int

const (
	pageRetry    pageKind = iota // 503: waitingroom cannot be reached
	pageUsed                     // 409: the pass was used before
	pageInvalid                  // 403: a forged, foreign or malformed pass
	pageExpired                  // 403: the pass expired
	pageRequired                 // 403: a non-GET request without a session
	pageStale                    // 403: a genuine-looking pass that can no longer be used (unknown key after a refetch, replaced by a newer pass)
)

// retryAfter is the Retry-After of the retry page, in seconds.
const retryAfter = 10

type pageText struct{ Title, Body, Link string }

// pageTexts are the pages' words by language and kind.
var pageTexts = map[string]map[pageKind]pageText{
	"en": {
		pageRetry:    {"Please retry in a moment", "The waiting room cannot be reached right now. Please try again in a few seconds.", "Retry"},
		pageUsed:     {"This pass was already used", "Each pass lets you in once. Go back to the waiting room to continue.", "Back to the waiting room"},
		pageInvalid:  {"This pass is not valid", "This link did not come from the waiting room for this shop. Please go through the waiting room.", "Go to the waiting room"},
		pageExpired:  {"This pass has expired", "Passes are valid for a few minutes only. Go back to the waiting room to continue.", "Back to the waiting room"},
		pageRequired: {"Please wait for your turn", "This page opens to buyers let in by the waiting room.", "Go to the waiting room"},
		pageStale:    {"This pass can no longer be used", "Go back to the waiting room: if it is still your turn, you can continue from there.", "Back to the waiting room"},
	},
	"ko": {
		pageRetry:    {"잠시 후 다시 시도해 주세요", "지금은 대기실에 연결할 수 없습니다. 몇 초 후에 다시 시도해 주세요.", "다시 시도"},
		pageUsed:     {"이미 사용된 입장권입니다", "입장권은 한 번만 사용할 수 있습니다. 대기실로 돌아가 계속해 주세요.", "대기실로 돌아가기"},
		pageInvalid:  {"유효하지 않은 입장권입니다", "이 링크는 이 상점의 대기실에서 발급된 것이 아닙니다. 대기실을 통해 입장해 주세요.", "대기실로 가기"},
		pageExpired:  {"입장권이 만료되었습니다", "입장권은 몇 분 동안만 유효합니다. 대기실로 돌아가 계속해 주세요.", "대기실로 돌아가기"},
		pageRequired: {"차례를 기다려 주세요", "이 페이지는 대기실을 거쳐 입장한 구매자만 이용할 수 있습니다.", "대기실로 가기"},
		pageStale:    {"이 입장권은 더 이상 사용할 수 없습니다", "대기실로 돌아가 주세요. 아직 차례가 남아 있으면 대기실에서 계속 진행할 수 있습니다.", "대기실로 돌아가기"},
	},
}

// pageCodes are the JSON error codes of the pages.
var pageCodes = map[pageKind]string{
	pageRetry: "unavailable", pageUsed: "pass_used", pageInvalid: "pass_invalid",
	pageExpired: "pass_expired", pageRequired: "session_required", pageStale: "pass_invalid",
}

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>{{.Title}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}a,button{font:inherit}</style>
</head><body><h1>{{.Title}}</h1><p>{{.Body}}</p>
{{- if .Repost}}
<form method="post" action="{{.Repost.Action}}"><input type="hidden" name="pass" value="{{.Repost.Pass}}"><input type="hidden" name="next" value="{{.Repost.Next}}"><button type="submit">{{.Link}}</button></form>
{{- else}}
<p><a href="{{.Href}}">{{.Link}}</a></p>
{{- end}}
</body></html>
`))

// repost is the retry form of the enter page: the same pass and next,
// posted again.
type repost struct{ Action, Pass, Next string }

// page writes one of the gate's pages, in English or Korean by
// Accept-Language, or as JSON when the client asks for JSON. Its link goes
// back to the room, or (the retry page) to the same URL.
func (g *Gate) page(w http.ResponseWriter, r *http.Request, status int, kind pageKind, re *repost) {
	lang := pickLang(r.Header.Get("Accept-Language"))
	t := pageTexts[lang][kind]
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Vary", "Accept-Language")
	if kind == pageRetry {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	href := g.roomPage
	if kind == pageRetry {
		href = LocalPath(r.URL.RequestURI()) // the same URL, when a path on this host
	}
	if wantsJSON(r) {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": pageCodes[kind], "message": t.Body, "roomURL": g.roomPage})
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	_ = pageTmpl.Execute(w, struct {
		pageText
		Lang, Href string
		Repost     *repost
	}{t, lang, href, re})
}

// wantsJSON reports a client that asks for JSON rather than a page.
func wantsJSON(r *http.Request) bool {
	a := r.Header.Get("Accept")
	return strings.Contains(a, "application/json") && !strings.Contains(a, "text/html")
}

// pickLang returns "ko" when Korean ranks above English in
// Accept-Language, else "en".
func pickLang(header string) string {
	best, bestQ := "en", -1.0
	for _, part := range strings.Split(header, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			q = f
		}
		base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		if (base == "en" || base == "ko") && q > bestQ && q > 0 {
			best, bestQ = base, q
		}
	}
	return best
}
