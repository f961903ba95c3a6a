package console

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"waitingroom/server/access"
	"waitingroom/server/admin"
	"waitingroom/server/audit"
	"waitingroom/views"
)

// Codes are the rooms' access codes (access.Codes).
type Codes interface {
	Generate(ctx context.Context, room string, n int, spec access.Spec) (access.Added, error)
	Import(ctx context.Context, room string, codes []string, spec access.Spec) (access.Added, error)
	Counts(ctx context.Context, room string) ([]access.LineCount, error)
	// List returns codes oldest first, Latest newest first.
	List(ctx context.Context, room string, after int64, limit int) ([]access.Info, error)
	Latest(ctx context.Context, room string, limit int) ([]access.Info, error)
	DeleteRoom(ctx context.Context, room string) (int64, error)
	Revoke(ctx context.Context, room, code string, id int64) (access.Info, error)
}

// CodesUploadMax bounds an uploaded CSV of codes: access.MaxBatch codes
// of up to 64 characters, and a few more bytes each.
const CodesUploadMax = 1 << 20

// MaxRevokeBatch bounds the codes one revocation takes.
const MaxRevokeBatch = 1000

// latestCodes is how many codes the page lists.
const latestCodes = 50

// codesReady answers 503 when no database keeps codes, and 404 for a path
// that names no valid room.
func (s *Console) codesReady(w http.ResponseWriter, r *http.Request) (string, bool) {
	if s.codes == nil {
		s.Error(w, r, http.StatusServiceUnavailable, views.CodesTextFor(Lang(r)).ErrOff)
		return "", false
	}
	return s.consoleRoomName(w, r)
}

// codesPage is room name's codes page with an empty form.
func (s *Console) codesPage(ctx context.Context, r *http.Request, sess Session, name string) (views.CodesPage, error) {
	if _, err := s.rooms.Room(ctx, name); err != nil {
		return views.CodesPage{}, err
	}
	counts, err := s.codes.Counts(ctx, name)
	if err != nil {
		return views.CodesPage{}, err
	}
	latest, err := s.codes.Latest(ctx, name, latestCodes)
	if err != nil {
		return views.CodesPage{}, err
	}
	loc, zone, _ := consoleZone(r)
	action := "/admin/rooms/" + name + "/codes"
	if zone != defaultZone {
		action += "?tz=" + url.QueryEscape(zone)
	}
	cp := views.CodesPage{Room: name, CSRF: sess.CSRF, MaxBatch: access.MaxBatch, MaxUses: access.MaxUses,
		Form: views.CodesForm{Count: "100", Uses: "1", Errors: map[string]string{}}, Zone: zone, Action: templ.SafeURL(action)}
	for _, c := range counts {
		cp.Lines = append(cp.Lines, views.CodesLine{Line: c.Line, Codes: c.Codes, Uses: c.Uses, Used: c.Used, Left: c.Left})
	}
	lang := Lang(r)
	for _, c := range latest {
		row := views.CodesRow{Hint: c.Hint, Line: c.Line, Uses: c.Uses, Used: c.Used,
			Created: views.ConsoleTime(c.CreatedAt, loc, lang), CreatedISO: c.CreatedAt.UTC().Format(time.RFC3339)}
		if c.ExpiresAt != nil {
			row.Expires, row.ExpiresISO = views.ConsoleTime(*c.ExpiresAt, loc, lang), c.ExpiresAt.UTC().Format(time.RFC3339)
		}
		cp.Latest = append(cp.Latest, row)
	}
	return cp, nil
}

func (s *Console) renderCodes(w http.ResponseWriter, r *http.Request, sess Session, status int, cp views.CodesPage) {
	t := views.CodesTextFor(Lang(r))
	s.render(w, r, status, views.ConsoleCodes(s.consolePage(r, sess, views.Fill(t.Title, "room", cp.Room), "rooms"), cp))
}

// consoleCodes serves GET /admin/rooms/{room}/codes.
func (s *Console) consoleCodes(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.codesReady(w, r)
	if !ok {
		return
	}
	cp, err := s.codesPage(r.Context(), r, sess, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	s.renderCodes(w, r, sess, http.StatusOK, cp)
}

// consoleChangeCodes serves POST /admin/rooms/{room}/codes: op=generate
// makes codes from the form and shows them this once (the answer is the
// page, not a redirect: the codes are not kept to show again); op=import
// adds the codes of an uploaded CSV file. Both are audited, without the
// codes.
func (s *Console) consoleChangeCodes(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.codesReady(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	t := views.CodesTextFor(Lang(r))
	cp, err := s.codesPage(ctx, r, sess, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	f := r.PostForm
	switch f.Get("op") {
	case "generate", "import":
	case "revoke":
		s.revokeCode(w, r, sess, cp, t)
		return
	default:
		s.Error(w, r, http.StatusBadRequest, views.RoomsTextFor(Lang(r)).ErrBadAction)
		return
	}
	loc, _, _ := consoleZone(r)
	spec, errs := codesSpecOfForm(f.Get("uses"), f.Get("line"), f.Get("expiresAt"), loc, s.clk.Now(), t)
	var (
		added  access.Added
		action string
		lines  []int // an upload's codes' lines in its file
	)
	if f.Get("op") == "import" {
		action = "codes.import"
		// The upload form's fields are uses-up and line-up.
		for _, k := range []string{"uses", "line"} {
			if msg, ok := errs[k]; ok {
				delete(errs, k)
				errs[k+"-up"] = msg
			}
		}
		var codes []string
		codes, lines, err = uploadedCodes(r, t)
		switch {
		case err == nil && len(codes) == 0:
			errs["file"] = t.ErrEmpty
		case err == nil && len(errs) == 0:
			added, err = s.codes.Import(ctx, name, codes, spec)
		}
	} else {
		action = "codes.generate"
		cp.Form = views.CodesForm{Count: f.Get("count"), Uses: f.Get("uses"), Line: f.Get("line"), ExpiresAt: f.Get("expiresAt"), Errors: errs}
		n, convErr := strconv.Atoi(strings.TrimSpace(f.Get("count")))
		if convErr != nil || n < 1 || n > access.MaxBatch {
			errs["count"] = views.Fill(t.ErrCount, "max", strconv.Itoa(access.MaxBatch))
		}
		if len(errs) == 0 {
			added, err = s.codes.Generate(ctx, name, n, spec)
		}
	}
	var inv *access.InvalidError
	var bad codesFileError
	switch {
	case errors.As(err, &bad):
		errs["file"] = string(bad)
	case errors.As(err, &inv) && action == "codes.import":
		field := map[string]string{"uses": "uses-up", "line": "line-up"}[inv.Field]
		if field == "" {
			field = "file"
		}
		errs[field] = codesFieldText(inv, t)
		if inv.Field == "code" && inv.Index > 0 && inv.Index <= len(lines) {
			errs[field] = views.Fill(t.ErrCode, "n", strconv.Itoa(lines[inv.Index-1]))
		}
	case errors.As(err, &inv):
		errs[inv.Field] = codesFieldText(inv, t)
	case err != nil:
		s.consoleFail(w, r, err)
		return
	}
	if len(errs) > 0 {
		cp.Form.Errors = errs
		cp.Error = t.FixErrors
		if msg := errs["file"]; msg != "" {
			cp.Error = msg
		}
		s.renderCodes(w, r, sess, http.StatusUnprocessableEntity, cp)
		return
	}
	s.log.Info("access codes made", "room", name, "by", sess.Operator, "action", action, "added", added.Added, "skipped", added.Skipped)
	s.audit(ctx, audit.Entry{Actor: sess.Operator, Room: name, Action: action, New: admin.CompactJSON(added.Audit(spec))})
	if cp, err = s.codesPage(ctx, r, sess, name); err != nil {
		s.consoleFail(w, r, err)
		return
	}
	if action == "codes.generate" {
		cp.New = added.Codes
		cp.Notice = views.Fill(t.NewCodes, "n", strconv.Itoa(len(added.Codes)))
	} else {
		cp.Notice = views.Fill(views.Fill(t.Imported, "n", strconv.Itoa(added.Added)), "m", strconv.Itoa(added.Skipped))
	}
	w.Header().Set("Cache-Control", "no-store")
	s.renderCodes(w, r, sess, http.StatusOK, cp)
}

// revokeCode revokes the codes of the form's field code, one a line (up
// to MaxRevokeBatch), each audited by its id and hint, and answers the
// page saying so.
func (s *Console) revokeCode(w http.ResponseWriter, r *http.Request, sess Session, cp views.CodesPage, t views.CodesText) {
	ctx := r.Context()
	var codes []string
	for _, line := range strings.Split(r.PostForm.Get("code"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			codes = append(codes, line)
		}
	}
	refuse := func(msg string) {
		cp.Form.Errors["revoke"] = msg
		cp.Error = msg
		s.renderCodes(w, r, sess, http.StatusUnprocessableEntity, cp)
	}
	if len(codes) > MaxRevokeBatch {
		refuse(views.Fill(t.ErrBatch, "max", strconv.Itoa(MaxRevokeBatch)))
		return
	}
	var revoked []access.Info
	for _, code := range codes {
		info, err := s.codes.Revoke(ctx, cp.Room, code, 0)
		if errors.Is(err, access.ErrUnknown) {
			continue
		}
		if err != nil {
			s.consoleFail(w, r, err)
			return
		}
		revoked = append(revoked, info)
		s.audit(ctx, audit.Entry{Actor: sess.Operator, Room: cp.Room, Action: "codes.revoke", Target: strconv.FormatInt(info.ID, 10),
			Old: admin.CompactJSON(info.Audit())})
	}
	if len(revoked) == 0 {
		refuse(t.ErrNoCode)
		return
	}
	s.log.Info("access codes revoked", "room", cp.Room, "by", sess.Operator, "revoked", len(revoked), "unknown", len(codes)-len(revoked))
	cp, err := s.codesPage(ctx, r, sess, cp.Room)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	if len(codes) == 1 {
		shown := "#" + strconv.FormatInt(revoked[0].ID, 10)
		if revoked[0].Hint != "" {
			shown = "…" + revoked[0].Hint
		}
		cp.Notice = views.Fill(t.Revoked, "code", shown)
	} else {
		cp.Notice = views.Fill(views.Fill(t.RevokedMany, "n", strconv.Itoa(len(revoked))), "m", strconv.Itoa(len(codes)-len(revoked)))
	}
	s.renderCodes(w, r, sess, http.StatusOK, cp)
}

// consoleCodesCSV serves GET /admin/rooms/{room}/codes.csv.
func (s *Console) consoleCodesCSV(w http.ResponseWriter, r *http.Request, _ Session) {
	name, ok := s.codesReady(w, r)
	if !ok {
		return
	}
	if err := WriteCodesCSV(r.Context(), w, s.codes, name, s.log); err != nil {
		s.consoleFail(w, r, err)
	}
}

// CodesLister pages through a room's codes, oldest first.
type CodesLister interface {
	List(ctx context.Context, room string, after int64, limit int) ([]access.Info, error)
}

// WriteCodesCSV answers every code of room as CSV, oldest first: id, hint
// (the last three characters of a code of ten or more), line, uses, used,
// expiry and creation; never the code itself, which the database does not
// keep. It returns an error, and writes nothing, when the first page
// cannot be read. A later page that fails ends the file with a last
// record that says so, and is logged to log.
func WriteCodesCSV(ctx context.Context, w http.ResponseWriter, codes CodesLister, room string, log *slog.Logger) error {
	const page = 10000
	rows, err := codes.List(ctx, room, 0, page)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="codes-`+room+`.csv"`)
	w.Header().Set("Cache-Control", "no-store")
	out := csv.NewWriter(w)
	out.Write([]string{"id", "hint", "line", "uses", "used", "expires_at", "created_at"})
	for len(rows) > 0 {
		for _, c := range rows {
			expires, hint := "", ""
			if c.ExpiresAt != nil {
				expires = c.ExpiresAt.UTC().Format(time.RFC3339)
			}
			if c.Hint != "" {
				hint = c.Hint
			}
			out.Write([]string{strconv.FormatInt(c.ID, 10), hint, c.Line, strconv.Itoa(c.Uses), strconv.Itoa(c.Used),
				expires, c.CreatedAt.UTC().Format(time.RFC3339)})
		}
		if len(rows) < page {
			break
		}
		last := rows[len(rows)-1].ID
		if rows, err = codes.List(ctx, room, last, page); err != nil {
			log.ErrorContext(ctx, "export codes: the file ends short", "room", room, "after", last, "err", err)
			out.Write([]string{"", "", "", "", "", "", "INCOMPLETE: the export failed after code " + strconv.FormatInt(last, 10)})
			break
		}
	}
	out.Flush()
	return nil
}

// codesSpecOfForm reads the uses (default 1), line and expiry (a
// datetime-local in loc) of a form, with the errors of the fields that
// are not valid.
func codesSpecOfForm(uses, line, expires string, loc *time.Location, now time.Time, t views.CodesText) (access.Spec, map[string]string) {
	errs := map[string]string{}
	spec := access.Spec{Uses: 1, Line: strings.TrimSpace(line)}
	if v := strings.TrimSpace(uses); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > access.MaxUses {
			errs["uses"] = views.Fill(t.ErrUses, "max", strconv.Itoa(access.MaxUses))
		}
		spec.Uses = n
	}
	if v := strings.TrimSpace(expires); v != "" {
		at, err := time.ParseInLocation("2006-01-02T15:04", v, loc)
		if err != nil {
			at, err = time.ParseInLocation("2006-01-02T15:04:05", v, loc)
		}
		if err != nil || !at.After(now) {
			errs["expiresAt"] = t.ErrExpires
		}
		spec.ExpiresAt = &at
	}
	if err := spec.Validate(now); err != nil {
		var inv *access.InvalidError
		if errors.As(err, &inv) && errs[inv.Field] == "" {
			errs[inv.Field] = codesFieldText(inv, t)
		}
	}
	return spec, errs
}

// codesFieldText is the operator's message for a refused field.
func codesFieldText(inv *access.InvalidError, t views.CodesText) string {
	switch inv.Field {
	case "count":
		return views.Fill(t.ErrTooBig, "max", strconv.Itoa(access.MaxBatch))
	case "uses":
		return views.Fill(t.ErrUses, "max", strconv.Itoa(access.MaxUses))
	case "line":
		return t.ErrLine
	case "expiresAt":
		return t.ErrExpires
	case "code":
		return views.Fill(t.ErrCode, "n", strconv.Itoa(inv.Index))
	}
	return inv.Msg
}

// codesFileError is an upload that is not a readable CSV of codes, in
// the operator's words.
type codesFileError string

func (e codesFileError) Error() string { return string(e) }

// uploadedCodes reads the form's CSV file (ReadCodesCSV).
func uploadedCodes(r *http.Request, t views.CodesText) ([]string, []int, error) {
	file, _, err := r.FormFile("file")
	if err != nil {
		return nil, nil, codesFileError(t.ErrNoFile)
	}
	defer file.Close()
	codes, lines, err := ReadCodesCSV(file, func(line int) error { return codesFileError(views.Fill(t.ErrCSV, "n", strconv.Itoa(line))) })
	return codes, lines, err
}

// codeHeaders are the column names a CRM's export gives its codes.
var codeHeaders = map[string]bool{"code": true, "codes": true, "access_code": true, "access code": true, "accesscode": true,
	"coupon": true, "coupon_code": true, "coupon code": true, "voucher": true, "voucher_code": true, "promo_code": true, "promo code": true}

// ReadCodesCSV reads a CSV of codes, with each code's line in the file. A
// first record that names a code column (code, access_code, coupon,
// voucher, promo_code, …, in any case) is a header, and the codes are
// read from that column; otherwise from the first. Empty records are
// skipped, and a spreadsheet's byte order mark is read. A record that
// does not read is answered by bad, with its line.
func ReadCodesCSV(in io.Reader, bad func(line int) error) ([]string, []int, error) {
	br := bufio.NewReader(in)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		br.Discard(3)
	}
	c := csv.NewReader(br)
	c.FieldsPerRecord = -1
	c.TrimLeadingSpace = true
	var codes []string
	var lines []int
	col, first := 0, true
	for {
		rec, err := c.Read()
		if errors.Is(err, io.EOF) {
			return codes, lines, nil
		}
		if parse := (*csv.ParseError)(nil); errors.As(err, &parse) {
			return nil, nil, bad(parse.Line)
		}
		if err != nil {
			return nil, nil, err
		}
		line, _ := c.FieldPos(0)
		if first {
			first = false
			header := false
			for i, f := range rec {
				if codeHeaders[strings.ToLower(strings.TrimSpace(f))] {
					col, header = i, true
					break
				}
			}
			if header {
				continue
			}
		}
		if col >= len(rec) {
			continue
		}
		if code := strings.TrimSpace(rec[col]); code != "" {
			codes = append(codes, code)
			lines = append(lines, line)
		}
	}
}
