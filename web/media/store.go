package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"waitingroom/server/absent"
	"waitingroom/server/order"
	"waitingroom/server/room"
	"waitingroom/server/store"
)

// Images keeps the uploaded images (store.DB).
type Images interface {
	PutImage(ctx context.Context, img store.Image) error
	Image(ctx context.Context, sumHex string) (store.Image, error)
}

// Store keeps the uploaded images: the store, a small cache of
// recently served images (a room's logo is fetched by every buyer of a
// sale that no CDN fronts), the names lately found missing, and one slot
// for decoding an upload. Reads of one image share one query, and the
// queries at once are bounded, so that neither a burst of buyers nor a
// flood of made-up names takes the order database's connections.
type Store struct {
	store Images
	// decoding holds the one upload being decoded: a full decode of a
	// large image takes tens of MiB, and uploads are rare.
	decoding chan struct{}

	lookups chan struct{} // a slot per store read under way
	group   singleflight.Group
	missing *absent.Set
	now     func() time.Time

	mu     sync.Mutex
	cached map[string]store.Image
	bytes  int
}

// Bounds of media.
const (
	// mediaCacheBytes bounds the images kept in memory.
	mediaCacheBytes = 32 << 20
	// Lookups bounds the store reads under way at once.
	Lookups = 4
	// mediaSlotWait is how long a read waits for a slot before the
	// request is answered 503.
	mediaSlotWait = 250 * time.Millisecond
	// ReadTimeout bounds one store read.
	ReadTimeout = 2 * time.Second
	// mediaMissingFor is how long a name found missing is answered 404
	// without asking the store again (an image is uploaded before any
	// setting names it), and mediaMissingMax bounds those names.
	mediaMissingFor = 30 * time.Second
	mediaMissingMax = 10000
)

// ErrBusy: every store slot stayed taken for mediaSlotWait.
var ErrBusy = errors.New("media: too many image reads under way")

func New(imgs Images) *Store {
	if imgs == nil {
		return nil
	}
	return &Store{store: imgs, decoding: make(chan struct{}, 1), lookups: make(chan struct{}, Lookups),
		missing: absent.New(mediaMissingFor, mediaMissingMax), now: time.Now, cached: map[string]store.Image{}}
}

// Image returns the image sumHex, from the cache or the store. It returns
// store.ErrNoImage for an unknown image, ErrBusy when the store's
// slots stay taken, or the store's error.
func (m *Store) Image(ctx context.Context, sumHex string) (store.Image, error) {
	if img, ok, err := m.known(sumHex); ok {
		return img, err
	}
	// The shared read does not end with the request that started it (the
	// others wait on it too): it has its own bounds.
	ch := m.group.DoChan(sumHex, func() (any, error) {
		// A read that ended between this request's look above and here
		// already answered: its image is cached, or its name missing.
		if img, ok, err := m.known(sumHex); ok {
			return img, err
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ReadTimeout)
		defer cancel()
		wait := time.NewTimer(mediaSlotWait)
		defer wait.Stop()
		select {
		case m.lookups <- struct{}{}:
		case <-wait.C:
			return store.Image{}, ErrBusy
		}
		defer func() { <-m.lookups }()
		img, err := m.store.Image(ctx, sumHex)
		switch {
		case errors.Is(err, store.ErrNoImage):
			m.missing.Add(sumHex, m.now())
		case err == nil:
			m.remember(img)
		}
		return img, err
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return store.Image{}, res.Err
		}
		return res.Val.(store.Image), nil
	case <-ctx.Done():
		return store.Image{}, ctx.Err()
	}
}

// known answers sumHex without the store when it can (ok): the cached
// image, or store.ErrNoImage for a name lately found missing.
func (m *Store) known(sumHex string) (img store.Image, ok bool, err error) {
	m.mu.Lock()
	img, ok = m.cached[sumHex]
	m.mu.Unlock()
	if ok {
		return img, true, nil
	}
	if m.missing.Has(sumHex, m.now()) {
		return store.Image{}, true, store.ErrNoImage
	}
	return store.Image{}, false, nil
}

func (m *Store) remember(img store.Image) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bytes+len(img.Data) > mediaCacheBytes {
		clear(m.cached)
		m.bytes = 0
	}
	if len(img.Data) <= mediaCacheBytes/4 {
		m.cached[img.SHA256] = img
		m.bytes += len(img.Data)
	}
}

// Put checks data as an image for slot and keeps it, as actor. It returns
// the image's path (room.MediaPath), or a *RefusedError.
func (m *Store) Put(ctx context.Context, actor string, slot Slot, data []byte) (string, error) {
	select {
	case m.decoding <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	checked, err := Check(slot, data)
	<-m.decoding
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	img := store.Image{SHA256: hex.EncodeToString(sum[:]), ContentType: checked.contentType,
		Width: checked.width, Height: checked.height, Data: data, CreatedBy: actor}
	if err := m.store.PutImage(ctx, img); err != nil {
		return "", err
	}
	m.missing.Forget(img.SHA256)
	return room.MediaPath(img.SHA256, checked.ext), nil
}

// fileName is the last segment of an image's path: its SHA-256 in hex
// and its extension.
var fileName = regexp.MustCompile(`^([0-9a-f]{64})\.(png|jpg|gif|webp|ico)$`)

// ParseFile splits the last segment of an image's path into its SHA-256
// in hex and its extension; ok is false for a name no image has.
func ParseFile(file string) (sumHex, ext string, ok bool) {
	m := fileName.FindStringSubmatch(file)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// Has reports whether path (/media/…) names an image m holds, of the
// type its extension says; a nil m holds none.
func (m *Store) Has(ctx context.Context, path string) bool {
	file, ok := strings.CutPrefix(path, "/media/")
	if m == nil || !ok {
		return false
	}
	sum, ext, ok := ParseFile(file)
	if !ok {
		return false
	}
	img, err := m.Image(ctx, sum)
	return err == nil && Ext(img.ContentType) == ext
}

// ErrNotHere refuses a product image path on this site that names
// no image it serves.
var ErrNotHere = &order.InvalidProductError{Field: "imageURL",
	Reason: "names no image on this server: give the path of an uploaded image (/media/…) or of a static image, or an https:// address"}
