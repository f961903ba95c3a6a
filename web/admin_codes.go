package web

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"waitingroom/server/access"
	"waitingroom/server/admin"
	"waitingroom/server/audit"
	"waitingroom/web/console"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

// The admin API of a room's access codes. The room must exist: a code
// made for a misspelt name would let nobody in. Its codes go with it when
// it is deleted.

const codesShape = `a JSON object such as {"count":100,"uses":1,"line":"presale","expiresAt":"2026-12-24T12:00:00+09:00"}, or text/csv of one code per line`

// codesRequest is the JSON body of POST /api/admin/rooms/{room}/codes.
type codesRequest struct {
	Count     int        `json:"count"`
	Uses      *int       `json:"uses"`
	Line      string     `json:"line"`
	ExpiresAt *time.Time `json:"expiresAt"`
}

// postCodes serves POST /api/admin/rooms/{room}/codes: with a JSON body it
// generates count codes and answers them, once; with a text/csv body (one
// code per line, the spec in the query: uses, line, expiresAt) it adds
// the uploaded codes. uses defaults to 1.
func (s *Server) postCodes(w http.ResponseWriter, r *http.Request) {
	if !s.hasCodes(w, r) {
		return
	}
	name := r.PathValue("room")
	media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var (
		added  access.Added
		spec   access.Spec
		err    error
		action string
		lines  []int // an upload's codes' lines in its file
	)
	switch media {
	case "application/json", "":
		var req codesRequest
		if !request.DecodeStrict(w, r, &req, codesShape) {
			return
		}
		spec = access.Spec{Line: req.Line, Uses: 1, ExpiresAt: req.ExpiresAt}
		if req.Uses != nil {
			spec.Uses = *req.Uses // 0 or less is refused by Validate, with its bounds
		}
		action = "codes.generate"
		added, err = s.codes.Generate(r.Context(), name, req.Count, spec)
	case "text/csv":
		var codes []string
		var ok bool
		if spec, ok = codesSpecOfQuery(w, r); !ok {
			return
		}
		if codes, lines, ok = readCodesCSV(w, r); !ok {
			return
		}
		action = "codes.import"
		added, err = s.codes.Import(r.Context(), name, codes, spec)
	default:
		response.WriteError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "Send "+codesShape+".")
		return
	}
	if inv := (*access.InvalidError)(nil); errors.As(err, &inv) && inv.Field == "code" && inv.Index > 0 && inv.Index <= len(lines) {
		response.WriteError(w, http.StatusBadRequest, "bad_codes", "Line "+strconv.Itoa(lines[inv.Index-1])+" of the file is not a code of 4 to 64 letters, digits or '_' (spaces and dashes are dropped).")
		return
	}
	if err != nil {
		s.codesFail(w, r, err)
		return
	}
	s.recordCodes(r.Context(), name, action, added, spec)
	response.WriteJSON(w, http.StatusCreated, added)
}

// revokeShape is the body of a revocation.
const revokeShape = `a JSON object such as {"code":"7KQ2-M9XD-4HTR"}, {"id":123} or {"codes":["7KQ2-M9XD-4HTR","FAN-2026-0001"]}`

// revokeCode serves POST /api/admin/rooms/{room}/codes/revoke: the code
// given as {"code":…} or {"id":…} (an id of the export), or each of a
// batch {"codes":[…]}, redeems no more; the places it bought stay. 404
// code_not_found when the room has no such code; a batch answers the
// codes revoked and the ones the room has not.
func (s *Server) revokeCode(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Code  string   `json:"code"`
		ID    int64    `json:"id"`
		Codes []string `json:"codes"`
	}
	if !s.hasCodes(w, r) || !request.DecodeStrict(w, r, &req, revokeShape) {
		return
	}
	named := 0
	for _, given := range []bool{req.Code != "", req.ID != 0, req.Codes != nil} {
		if given {
			named++
		}
	}
	if named != 1 || len(req.Codes) > console.MaxRevokeBatch || req.Codes != nil && len(req.Codes) == 0 {
		response.WriteError(w, http.StatusBadRequest, "bad_codes", "Name the codes to revoke one way: "+revokeShape+", with 1 to "+strconv.Itoa(console.MaxRevokeBatch)+" codes in a batch.")
		return
	}
	name := r.PathValue("room")
	if req.Codes != nil {
		revoked, unknown, err := s.revokeCodes(r.Context(), name, req.Codes)
		if err != nil {
			s.codesFail(w, r, err)
			return
		}
		response.WriteJSON(w, http.StatusOK, map[string]any{"revoked": revoked, "unknown": unknown})
		return
	}
	info, err := s.codes.Revoke(r.Context(), name, req.Code, req.ID)
	switch {
	case errors.Is(err, access.ErrUnknown):
		response.WriteError(w, http.StatusNotFound, "code_not_found", "The room has no such code.")
		return
	case err != nil:
		s.codesFail(w, r, err)
		return
	}
	s.recordRevoke(r.Context(), name, info)
	response.WriteJSON(w, http.StatusOK, revokedJSON(info))
}

// revokeCodes revokes each of codes in room name, and returns those it
// revoked and those the room has not.
func (s *Server) revokeCodes(ctx context.Context, name string, codes []string) (revoked []map[string]any, unknown []string, err error) {
	revoked, unknown = []map[string]any{}, []string{}
	for _, c := range codes {
		info, err := s.codes.Revoke(ctx, name, c, 0)
		if errors.Is(err, access.ErrUnknown) {
			unknown = append(unknown, c)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		s.recordRevoke(ctx, name, info)
		revoked = append(revoked, revokedJSON(info))
	}
	return revoked, unknown, nil
}

func revokedJSON(info access.Info) map[string]any {
	return map[string]any{"id": info.ID, "hint": info.Hint, "line": info.Line, "uses": info.Uses, "used": info.Used, "revoked": true}
}

// recordRevoke audits a code revoked by the admin API, by its id and hint.
func (s *Server) recordRevoke(ctx context.Context, name string, info access.Info) {
	s.recordAudit(ctx, audit.Entry{Actor: apiActor, Room: name, Action: "codes.revoke", Target: strconv.FormatInt(info.ID, 10),
		Old: admin.CompactJSON(info.Audit())})
}

// getCodes serves GET /api/admin/rooms/{room}/codes: the room's codes by
// line, with their uses and what is left.
func (s *Server) getCodes(w http.ResponseWriter, r *http.Request) {
	if !s.hasCodes(w, r) || !drainBody(w, r) {
		return
	}
	counts, err := s.codes.Counts(r.Context(), r.PathValue("room"))
	if err != nil {
		s.codesFail(w, r, err)
		return
	}
	if counts == nil {
		counts = []access.LineCount{}
	}
	response.WriteJSON(w, http.StatusOK, map[string]any{"lines": counts})
}

// exportCodes serves GET /api/admin/rooms/{room}/codes.csv: every code of
// the room by its hint (console.WriteCodesCSV).
func (s *Server) exportCodes(w http.ResponseWriter, r *http.Request) {
	if !s.hasCodes(w, r) || !drainBody(w, r) {
		return
	}
	if err := console.WriteCodesCSV(r.Context(), w, s.codes, r.PathValue("room"), s.log); err != nil {
		s.codesFail(w, r, err)
	}
}

// hasCodes answers 404 codes_off when no order database keeps codes, and
// room_not_found for a room that does not exist.
func (s *Server) hasCodes(w http.ResponseWriter, r *http.Request) bool {
	if s.codes == nil {
		response.WriteError(w, http.StatusNotFound, "codes_off", "Access codes need the order database, which this server has not attached.")
		return false
	}
	if _, err := s.rooms.Room(r.Context(), r.PathValue("room")); err != nil {
		s.fail(w, r, err)
		return false
	}
	return true
}

// codesFail answers a request the codes refused (400, saying what to
// change), or a database failure.
func (s *Server) codesFail(w http.ResponseWriter, r *http.Request, err error) {
	if inv := (*access.InvalidError)(nil); errors.As(err, &inv) {
		response.WriteError(w, http.StatusBadRequest, "bad_codes", inv.Msg+".")
		return
	}
	s.fail(w, r, err)
}

// recordCodes writes the audit log's entry of codes made: how many, and
// what they grant; never the codes.
func (s *Server) recordCodes(ctx context.Context, name, action string, added access.Added, spec access.Spec) {
	s.recordAudit(ctx, audit.Entry{Actor: apiActor, Room: name, Action: action, New: admin.CompactJSON(added.Audit(spec))})
}

// codesSpecOfQuery reads an upload's spec from the query: uses (default
// 1), line, expiresAt (RFC 3339).
func codesSpecOfQuery(w http.ResponseWriter, r *http.Request) (access.Spec, bool) {
	q := r.URL.Query()
	for k := range q {
		if k != "uses" && k != "line" && k != "expiresAt" {
			response.WriteError(w, http.StatusBadRequest, "bad_codes", "Unknown query parameter "+strconv.Quote(k)+": an upload takes uses, line and expiresAt.")
			return access.Spec{}, false
		}
	}
	spec := access.Spec{Line: q.Get("line"), Uses: 1}
	if v := q.Get("uses"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			response.WriteError(w, http.StatusBadRequest, "bad_codes", "uses must be a whole number, not "+strconv.Quote(v)+".")
			return spec, false
		}
		spec.Uses = n
	}
	if v := q.Get("expiresAt"); v != "" {
		// A "+09:00" left unescaped in a query reads as " 09:00".
		t, err := time.Parse(time.RFC3339, strings.Replace(v, " ", "+", 1))
		if err != nil {
			response.WriteError(w, http.StatusBadRequest, "bad_codes", "expiresAt must be a time such as 2026-12-24T12:00:00+09:00, not "+strconv.Quote(v)+".")
			return spec, false
		}
		spec.ExpiresAt = &t
	}
	return spec, true
}

// readCodesCSV reads an uploaded CSV of codes (console.ReadCodesCSV), and
// each code's line in the file.
func readCodesCSV(w http.ResponseWriter, r *http.Request) ([]string, []int, bool) {
	codes, lines, err := console.ReadCodesCSV(http.MaxBytesReader(w, r.Body, console.CodesUploadMax), func(line int) error {
		return &access.InvalidError{Field: "code", Msg: "The CSV does not read at line " + strconv.Itoa(line)}
	})
	if inv := (*access.InvalidError)(nil); errors.As(err, &inv) {
		response.WriteError(w, http.StatusBadRequest, "bad_codes", inv.Msg+".")
		return nil, nil, false
	}
	if err != nil {
		return nil, nil, request.BodyError(w, err)
	}
	return codes, lines, true
}
