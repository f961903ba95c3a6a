package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"html"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"waitingroom/web/console"
	"waitingroom/web/media"

	"waitingroom/server/order"
	"waitingroom/server/room"
	"waitingroom/server/store"
	"waitingroom/views"
)

// productCount is the number of products of rc's room.
func (rc *roomsConsole) productCount(t *testing.T) int {
	t.Helper()
	ps, err := rc.web.catalog.AdminProducts(context.Background(), rc.room)
	if err != nil {
		t.Fatal(err)
	}
	return len(ps)
}

// productNamed is the product of rc's room named name.
func (rc *roomsConsole) productNamed(t *testing.T, name string) order.Product {
	t.Helper()
	ps, err := rc.web.catalog.AdminProducts(context.Background(), rc.room)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no product %q in %+v", name, ps)
	return order.Product{}
}

// stored reports whether the image data is in rc's image store.
func (rc *roomsConsole) stored(t *testing.T, data []byte) bool {
	t.Helper()
	sum := sha256.Sum256(data)
	_, err := rc.db.Image(context.Background(), hex.EncodeToString(sum[:]))
	if err != nil && !errors.Is(err, store.ErrNoImage) {
		t.Fatal(err)
	}
	return err == nil
}

// TestConsoleProductImageUpload: a product's image can be uploaded with
// its form, new or edited, checked like the branding's images: a good one
// is kept, served at /media/… and shown; an SVG, an oversize file or
// bytes that are no image are refused at the image's field in the
// operator's language, keeping what was typed and storing nothing.
func TestConsoleProductImageUpload(t *testing.T) {
	t.Parallel()
	rc := brandingConsole(t)
	base := "/admin/rooms/" + rc.room + "/products"
	en, ko := views.BrandingTextFor("en").ErrImage, views.BrandingTextFor("ko").ErrImage
	pngImg := testImage(t, "png", 40, 30)
	form := func(name string) map[string]string {
		return map[string]string{"name": name, "price": "12.50", "currency": "USD", "stock": "3", "imageURL": ""}
	}
	for i, tc := range []struct {
		name, lang string
		up         upload
		// refusal is the message expected at the field; "" saves an
		// image of extension ext.
		refusal, ext string
	}{
		{"png", "en", upload{"imageURL-file", "shoe.png", "image/png", pngImg}, "", "png"},
		{"jpeg named .png", "en", upload{"imageURL-file", "shoe.png", "image/png", testImage(t, "jpeg", 30, 30)}, "", "jpg"},
		{"svg", "ko", upload{"imageURL-file", "shoe.svg", "image/svg+xml", []byte(svgWithScript)}, ko["svg"], ""},
		{"oversize", "en", upload{"imageURL-file", "big.png", "image/png", append(bytes.Clone(pngImg), make([]byte, media.ProductSlot.MaxBytes)...)},
			console.ImageRefusal(en, media.ProductSlot, media.RefusedTooLarge), ""},
		{"garbage", "en", upload{"imageURL-file", "shoe.png", "image/png", []byte("%PDF-1.4 not an image")}, views.RoomsTextFor("en").ErrImageType, ""},
		{"garbage in Korean", "ko", upload{"imageURL-file", "shoe.png", "image/png", []byte("GIF89a garbage")}, ko["corrupt"], ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "Shoe " + strconv.Itoa(i)
			before := rc.productCount(t)
			resp, body := rc.postMultipart(t, base, form(name), []upload{tc.up}, map[string]string{"Accept-Language": tc.lang})
			if tc.refusal != "" {
				if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(html.UnescapeString(body), tc.refusal) ||
					!strings.Contains(body, `id="err-imageURL"`) || !strings.Contains(body, `value="`+name+`"`) {
					t.Fatalf("%d, want 422 with %q at imageURL and the typed name:\n%s", resp.StatusCode, tc.refusal, body)
				}
				if rc.productCount(t) != before || rc.stored(t, tc.up.data) {
					t.Fatal("a refused form stored something")
				}
				return
			}
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("add: %d %s", resp.StatusCode, body)
			}
			p := rc.productNamed(t, name)
			if !room.ValidMediaPath(p.ImageURL) || !strings.HasSuffix(p.ImageURL, "."+tc.ext) {
				t.Fatalf("image saved as %q, want a /media/….%s", p.ImageURL, tc.ext)
			}
			if r := rc.do(t, "GET", p.ImageURL, "", nil, nil); r.status != 200 || r.body != string(tc.up.data) {
				t.Fatalf("GET %s: %d (%d bytes)", p.ImageURL, r.status, len(r.body))
			}
			if _, page := rc.get(t, base, "en"); !strings.Contains(page, `<img class="thumb" src="`+p.ImageURL+`"`) {
				t.Fatalf("the list does not show %s: %s", p.ImageURL, page)
			}
		})
	}

	// On the edit form, an upload replaces the address typed beside it.
	p := rc.productNamed(t, "Shoe 0")
	item := base + "/" + strconv.FormatInt(p.ID, 10)
	gif := testImage(t, "gif", 20, 20)
	edit := form("Shoe 0")
	edit["imageURL"] = "https://cdn.example/typed.png"
	if resp, body := rc.postMultipart(t, item, edit, []upload{{"imageURL-file", "shoe.gif", "image/gif", gif}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit: %d %s", resp.StatusCode, body)
	}
	if got := rc.productNamed(t, "Shoe 0").ImageURL; !room.ValidMediaPath(got) || !strings.HasSuffix(got, ".gif") {
		t.Fatalf("edited image %q, want the uploaded GIF", got)
	}
	if _, page := rc.get(t, item, "en"); !strings.Contains(page, `enctype="multipart/form-data"`) || !strings.Contains(page, `name="imageURL-file" type="file"`) {
		t.Fatalf("the edit form has no upload: %s", page)
	}
}

// TestConsoleProductImageTooLarge: a form over its limit is not read: the
// page says the image's limit at its field, and nothing is stored.
func TestConsoleProductImageTooLarge(t *testing.T) {
	t.Parallel()
	rc := brandingConsole(t)
	base := "/admin/rooms/" + rc.room + "/products"
	huge := append(testImage(t, "png", 10, 10), make([]byte, console.ProductBodyMax())...)
	fields := map[string]string{"name": "Huge", "price": "1", "currency": "USD", "stock": "1"}
	for _, lang := range []string{"en", "ko"} {
		resp, body := rc.postMultipart(t, base, fields, []upload{{"imageURL-file", "huge.png", "image/png", huge}}, map[string]string{"Accept-Language": lang})
		want := views.Fill(views.RoomsTextFor(lang).ErrImageTooLarge, "kb", strconv.Itoa(media.ProductSlot.MaxBytes>>10))
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, `id="err-imageURL"`) || !strings.Contains(html.UnescapeString(body), want) {
			t.Fatalf("%s: %d, want 413 with %q at imageURL: %s", lang, resp.StatusCode, want, body)
		}
	}
	if rc.productCount(t) != 0 || rc.stored(t, huge) {
		t.Fatal("a form over its limit stored something")
	}
}

// TestConsoleProductUploadRefusesForgeries: an upload from another site,
// or without the session's CSRF token, changes nothing and keeps no
// image.
func TestConsoleProductUploadRefusesForgeries(t *testing.T) {
	t.Parallel()
	rc := brandingConsole(t)
	base := "/admin/rooms/" + rc.room + "/products"
	for i, tc := range []struct {
		name   string
		fields map[string]string
		hdr    map[string]string
	}{
		{"cross-site", nil, map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"another origin", nil, map[string]string{"Origin": "https://evil.example"}},
		{"no CSRF token", map[string]string{"csrf": ""}, nil},
		{"a wrong CSRF token", map[string]string{"csrf": "forged"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fields := map[string]string{"name": "Forged", "price": "1", "currency": "USD", "stock": "1"}
			for k, v := range tc.fields {
				fields[k] = v
			}
			img := testImage(t, "png", 11+i, 11)
			resp, body := rc.postMultipart(t, base, fields, []upload{{"imageURL-file", "x.png", "image/png", img}}, tc.hdr)
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("%d, want 403: %s", resp.StatusCode, body)
			}
			if rc.productCount(t) != 0 || rc.stored(t, img) {
				t.Fatal("a forged upload stored something")
			}
		})
	}
}

// TestProductImagePath: an image path on this site must name an image it
// serves (uploaded, or a static image at its fingerprinted URL), in the
// console and the admin API alike; https:// addresses are not fetched. A
// product saved with a path that names nothing stays editable while the
// path is kept.
func TestProductImagePath(t *testing.T) {
	t.Parallel()
	rc := brandingConsole(t)
	ctx := context.Background()
	base := "/admin/rooms/" + rc.room + "/products"
	api := "/api/admin/rooms/" + rc.room + "/products"
	uploaded, err := rc.web.images.Put(ctx, "ann", media.ProductSlot, testImage(t, "png", 12, 12))
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name, path, lang string
		ok               bool
	}{
		{"missing static file", "/static/shoe.png", "en", false},
		{"unknown upload", room.MediaPath(strings.Repeat("0", 64), "png"), "ko", false},
		{"upload under another extension", strings.TrimSuffix(uploaded, ".png") + ".jpg", "en", false},
		{"static file that is no image", rc.web.assets.url("app.css"), "en", false},
		{"unfingerprinted static file", "/static/favicon.ico", "en", false},
		{"another path", "/shop/shoe.png", "ko", false},
		{"static image", rc.web.assets.url("favicon.ico"), "en", true},
		{"uploaded image", uploaded, "en", true},
		{"https address", "https://cdn.example/shoe.png", "en", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "Item " + strconv.Itoa(i)
			before := rc.productCount(t)
			f := map[string]string{"name": name, "price": "1", "currency": "USD", "stock": "1", "imageURL": tc.path}
			resp, body := rc.postMultipart(t, base, f, nil, map[string]string{"Accept-Language": tc.lang})
			if tc.ok {
				if resp.StatusCode != http.StatusSeeOther || rc.productNamed(t, name).ImageURL != tc.path {
					t.Fatalf("console: %d, want the image saved: %s", resp.StatusCode, body)
				}
			} else {
				want := views.RoomsTextFor(tc.lang).ErrImageMissing
				if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(html.UnescapeString(body), want) ||
					!strings.Contains(body, `id="err-imageURL"`) || rc.productCount(t) != before {
					t.Fatalf("console: %d, want 422 with %q at imageURL: %s", resp.StatusCode, want, body)
				}
			}
			r := rc.do(t, "POST", api, `{"name":"API `+name+`","price":1,"currency":"USD","stock":1,"imageURL":`+strconv.Quote(tc.path)+`}`, adminAuth, nil)
			if tc.ok != (r.status == http.StatusCreated) || !tc.ok && (r.status != http.StatusBadRequest || !strings.Contains(r.body, "imageURL names no image")) {
				t.Fatalf("API: %d %s", r.status, r.body)
			}
		})
	}

	// A product saved with a path that names nothing (before paths were
	// checked, or its file since removed) keeps it through an edit, and
	// cannot be moved to another such path.
	old, err := rc.web.catalog.CreateProduct(ctx, rc.room, order.ProductPatch{Name: ptrTo("Old"), Price: ptrTo(int64(100)), Stock: ptrTo(int64(1)), ImageURL: ptrTo("/static/gone.png")})
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(old.ID, 10)
	if r := rc.do(t, "PUT", api+"/"+id, `{"stock":2,"imageURL":"/static/gone.png"}`, adminAuth, nil); r.status != http.StatusOK {
		t.Fatalf("API edit keeping the path: %d %s", r.status, r.body)
	}
	kept := map[string]string{"name": "Old", "price": "1", "currency": "USD", "stock": "3", "imageURL": "/static/gone.png"}
	if resp, body := rc.postMultipart(t, base+"/"+id, kept, nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("console edit keeping the path: %d %s", resp.StatusCode, body)
	}
	if r := rc.do(t, "PUT", api+"/"+id, `{"imageURL":"/static/other.png"}`, adminAuth, nil); r.status != http.StatusBadRequest {
		t.Fatalf("API edit to another missing path: %d %s", r.status, r.body)
	}
	kept["imageURL"] = "/static/other.png"
	if resp, body := rc.postMultipart(t, base+"/"+id, kept, nil, nil); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `id="err-imageURL"`) {
		t.Fatalf("console edit to another missing path: %d %s", resp.StatusCode, body)
	}
	if got := rc.productNamed(t, "Old"); got.ImageURL != "/static/gone.png" || got.Stock != 3 {
		t.Fatalf("the old product is now %+v", got)
	}
}

// TestAdminUploadImage: the admin API keeps an image posted as its body,
// checked as the console's uploads are, and answers its path, which a
// product then takes as its imageURL; a refused image, a request without
// the admin token or from another site keeps nothing.
func TestAdminUploadImage(t *testing.T) {
	t.Parallel()
	rc := brandingConsole(t)
	en := views.BrandingTextFor("en").ErrImage
	for i, tc := range []struct {
		name   string
		data   []byte
		hdr    map[string]string
		status int
		// said is in the answer's body.
		said string
	}{
		{"png", testImage(t, "png", 21, 21), adminAuth, http.StatusCreated, `"path":"/media/`},
		{"webp", testWebP(t), adminAuth, http.StatusCreated, `.webp"`},
		{"svg", []byte(svgWithScript), adminAuth, http.StatusUnprocessableEntity, en["svg"]},
		{"garbage", []byte("%PDF-1.4 not an image"), adminAuth, http.StatusUnprocessableEntity, views.RoomsTextFor("en").ErrImageType},
		{"oversize", append(testImage(t, "png", 22, 22), make([]byte, media.ProductSlot.MaxBytes)...), adminAuth, http.StatusRequestEntityTooLarge, "at most 1024 KB"},
		{"no token", testImage(t, "png", 23, 23), nil, http.StatusUnauthorized, "unauthorized"},
		{"cross-site", testImage(t, "png", 24, 24), map[string]string{"Authorization": adminAuth["Authorization"], "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden, "cross_site"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rc.do(t, "POST", "/api/admin/media", string(tc.data), tc.hdr, nil)
			if r.status != tc.status || !strings.Contains(r.body, tc.said) {
				t.Fatalf("%d %s, want %d with %q", r.status, r.body, tc.status, tc.said)
			}
			if tc.status != http.StatusCreated {
				if rc.stored(t, tc.data) {
					t.Fatal("a refused upload was kept")
				}
				return
			}
			path := r.body[strings.Index(r.body, `/media/`):strings.LastIndex(r.body, `"`)]
			p := rc.do(t, "POST", "/api/admin/rooms/"+rc.room+"/products", `{"name":"Shoe `+strconv.Itoa(i)+`","price":1,"stock":1,"imageURL":"`+path+`"}`, adminAuth, nil)
			if p.status != http.StatusCreated || !strings.Contains(p.body, path) {
				t.Fatalf("a product with the uploaded %s: %d %s", path, p.status, p.body)
			}
		})
	}
}
