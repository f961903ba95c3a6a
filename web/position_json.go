package web

import (
	"encoding/json"
	"net/http"
	"strconv"

	"waitingroom/server/queue"
	"waitingroom/web/sse"
)

// Header values of the JSON API's answers, set without Header.Set's allocation. Each
// slice is full (len == cap), so that an Add appends to a copy, never to
// these.
var (
	jsonContentType = []string{"application/json; charset=utf-8"}
	noSniff         = []string{"nosniff"}
	noStore         = []string{"no-store"}
)

// writePosition answers p as response.WriteJSON would, byte for byte, with its JSON
// written by hand into a buffer of s.jsonBufs: every enter and poll answers
// one.
func (s *Server) writePosition(w http.ResponseWriter, status int, p queue.Position) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["X-Content-Type-Options"] = noSniff
	w.WriteHeader(status)
	buf, _ := s.jsonBufs.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	*buf = appendPosition((*buf)[:0], p)
	_, _ = w.Write(*buf)
	s.jsonBufs.Put(buf)
}

// appendPosition appends p's JSON as encoding/json encodes it, with the
// newline that json.Encoder ends it with.
func appendPosition(b []byte, p queue.Position) []byte {
	b = append(b, `{"status":`...)
	b = appendJSONString(b, string(p.Status))
	b = sse.AppendPlace(b, p)
	b = append(b, `,"entryToken":`...)
	if p.EntryToken == nil {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, *p.EntryToken)
	}
	b = append(b, `,"soldOut":`...)
	b = strconv.AppendBool(b, p.SoldOut)
	b = append(b, `,"phase":`...)
	b = appendJSONString(b, p.Phase)
	b = append(b, `,"prequeueAt":`...)
	b = appendIntOrNull(b, p.PrequeueAt)
	b = append(b, `,"opensAt":`...)
	b = appendIntOrNull(b, p.OpensAt)
	b = append(b, `,"closesAt":`...)
	b = appendIntOrNull(b, p.ClosesAt)
	b = append(b, `,"serverTime":`...)
	b = strconv.AppendInt(b, p.ServerTime, 10)
	b = append(b, `,"paused":`...)
	b = strconv.AppendBool(b, p.Paused)
	if p.PassExpiresAt != 0 {
		b = append(b, `,"passExpiresAt":`...)
		b = strconv.AppendInt(b, p.PassExpiresAt, 10)
	}
	if p.RankUpReason != "" {
		b = append(b, `,"rankUpReason":`...)
		b = appendJSONString(b, p.RankUpReason)
	}
	return append(b, "}\n"...)
}

func appendIntOrNull(b []byte, v *int64) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *v, 10)
}

// appendJSONString appends s quoted. The strings of a Position (statuses,
// phases, reasons, URL-safe base64 tokens) need no escaping; any other
// goes through encoding/json, which escapes as response.WriteJSON does.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
