package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"waitingroom/web/response"
)

// asset is one embedded file, held in memory plain and gzipped.
type asset struct {
	body, gz []byte
	etag     string
	ctype    string
}

// assets serves the embedded static files under content-hash URLs
// (/static/app.3f2a9c1b.js), so they can be cached for a year.
type assets struct {
	byURL  map[string]*asset
	urlFor map[string]string // "app.js" -> "/static/app.3f2a9c1b.js"
	plain  map[string]*asset // unhashed files served at the root (robots.txt)
}

// loadAssets reads every file of fsys. It returns an error when a file
// cannot be read or compressed.
func loadAssets(fsys fs.FS) (*assets, error) {
	a := &assets{byURL: map[string]*asset{}, urlFor: map[string]string{}, plain: map[string]*asset{}}
	if fsys == nil {
		return a, nil
	}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		hash := hex.EncodeToString(sum[:])[:12]
		ext := path.Ext(name)
		ctype := mime.TypeByExtension(ext)
		if ext == ".ico" { // not in Go's table; the system's may lack it
			ctype = "image/x-icon"
		}
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		as := &asset{body: body, gz: gzipBytes(body), etag: `"` + hash + `"`, ctype: ctype}
		url := "/static/" + strings.TrimSuffix(name, ext) + "." + hash + ext
		a.byURL[url] = as
		a.urlFor[name] = url
		a.plain[name] = as
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: load static assets: %w", err)
	}
	return a, nil
}

// url returns the fingerprinted URL of name.
func (a *assets) url(name string) string { return a.urlFor[name] }

func (a *assets) serveHashed(w http.ResponseWriter, r *http.Request) {
	as := a.byURL[r.URL.Path]
	if as == nil {
		response.WriteError(w, http.StatusNotFound, "not_found", "No such file.")
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	serveAsset(w, r, as)
}

func (a *assets) servePlain(name string, maxAge time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		as := a.plain[name]
		if as == nil {
			response.WriteError(w, http.StatusNotFound, "not_found", "No such file.")
			return
		}
		w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(maxAge.Seconds())))
		serveAsset(w, r, as)
	}
}

func serveAsset(w http.ResponseWriter, r *http.Request, as *asset) {
	h := w.Header()
	h.Set("ETag", as.etag)
	h.Set("Content-Type", as.ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Vary", "Accept-Encoding")
	if r.Header.Get("If-None-Match") == as.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeBody(w, r, as.body, as.gz)
}

// writeBody writes body, or its gzipped form gz when the client takes gzip.
func writeBody(w http.ResponseWriter, r *http.Request, body, gz []byte) {
	if gz != nil && acceptsGzip(r) {
		w.Header().Set("Content-Encoding", "gzip")
		body = gz
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.TrimSpace(params) != "q=0" {
			return true
		}
	}
	return false
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}
