package bucket

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	gax "github.com/googleapis/gax-go/v2"
	"golang.org/x/time/rate"
	"google.golang.org/api/googleapi"
	storage "google.golang.org/api/storage/v1"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/providers/gcpclient"
)

// GCS defaults. A bucket serves some 5,000 object reads and 1,000 writes a
// second before it scales up; a deleter reading a thousand records is
// paced by their size, not by reclaim.
const (
	// DefaultGCSPageSize is objects.list's maxResults, the API's maximum.
	DefaultGCSPageSize = 1000
)

// GCSOptions say which GCS bucket, and how it is reached.
type GCSOptions struct {
	// Reach: the endpoint (empty: storage.googleapis.com), credentials
	// (empty: application default credentials, e.g. GKE Workload
	// Identity) and user agent.
	gcpclient.Reach
	Bucket string
	// MaxObject bounds what Get reads (default DefaultMaxObject).
	MaxObject int64
	// MaxAttempts is the tries per call, the first included (default
	// DefaultMaxAttempts; 1: no retry). Calls retry on 429, 408, 5xx
	// and transport errors, with jittered backoff from RetryInitial
	// (default 500ms) to RetryMax (default 30s).
	MaxAttempts            int
	RetryInitial, RetryMax time.Duration
	// RequestsPerSecond and Burst pace every call (defaults
	// DefaultRequestsPerSecond, DefaultBurst).
	RequestsPerSecond float64
	Burst             int
	// PageSize is objects.list's maxResults (default and most
	// DefaultGCSPageSize).
	PageSize int
}

// GCS is one GCS bucket: the same contract as Client (S3). A put is one
// request that GCS makes visible whole or not at all, with the body's MD5
// as its precondition: GCS refuses a body that does not match it, so a
// corrupted upload never replaces a record.
type GCS struct {
	api     *storage.Service
	bucket  string
	max     int64
	retry   gax.Backoff
	tries   int
	limiter *rate.Limiter
	page    int64
}

// NewGCS builds the client. It calls nothing.
func NewGCS(ctx context.Context, o GCSOptions) (*GCS, error) {
	if o.Bucket == "" {
		return nil, errors.New("bucket: no bucket name")
	}
	api, err := storage.NewService(ctx, o.ClientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("gcs: %w", err)
	}
	c := &GCS{api: api, bucket: o.Bucket, max: o.MaxObject, tries: o.MaxAttempts,
		retry: gax.Backoff{Initial: o.RetryInitial, Max: o.RetryMax, Multiplier: 2}}
	if c.max <= 0 {
		c.max = DefaultMaxObject
	}
	if c.tries <= 0 {
		c.tries = DefaultMaxAttempts
	}
	if c.retry.Initial <= 0 {
		c.retry.Initial = 500 * time.Millisecond
	}
	if c.retry.Max <= 0 {
		c.retry.Max = 30 * time.Second
	}
	rps, burst := o.RequestsPerSecond, o.Burst
	if rps <= 0 {
		rps = DefaultRequestsPerSecond
	}
	if burst <= 0 {
		burst = DefaultBurst
	}
	c.limiter = rate.NewLimiter(rate.Limit(rps), burst)
	c.page = DefaultGCSPageSize
	if o.PageSize > 0 && o.PageSize < DefaultGCSPageSize {
		c.page = int64(o.PageSize)
	}
	return c, nil
}

// Put writes body at key, replacing what was there in one step: one
// request (no resumable upload to leave half done), its MD5 declared so
// that GCS stores exactly body or nothing. The object is stored as
// application/gzip with no Content-Encoding, so GCS never transcodes what
// a Get reads.
func (c *GCS) Put(ctx context.Context, key string, body []byte) error {
	sum := md5.Sum(body)
	obj := &storage.Object{Name: key, ContentType: "application/gzip", Md5Hash: base64.StdEncoding.EncodeToString(sum[:])}
	err := c.do(ctx, func() error {
		_, err := c.api.Objects.Insert(c.bucket, obj).Context(ctx).Fields("generation").
			Media(bytes.NewReader(body), googleapi.ChunkSize(0), googleapi.ContentType("application/gzip")).Do()
		return err
	})
	if err != nil {
		return fmt.Errorf("put gs://%s/%s: %w", c.bucket, key, classifyGCS(err))
	}
	return nil
}

// Get reads the object at key: an error wrapping outcome.ErrNotFound
// when there is none, ErrDenied when GCS refuses.
func (c *GCS) Get(ctx context.Context, key string) ([]byte, error) {
	var b []byte
	err := c.do(ctx, func() error {
		resp, err := c.api.Objects.Get(c.bucket, key).Context(ctx).Download()
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err = io.ReadAll(io.LimitReader(resp.Body, c.max+1))
		if err != nil {
			return fmt.Errorf("reading: %w", err)
		}
		if int64(len(b)) > c.max {
			return permanent{fmt.Errorf("larger than %d bytes", c.max)}
		}
		if resp.ContentLength >= 0 && resp.ContentLength != int64(len(b)) {
			return fmt.Errorf("read %d of %d bytes", len(b), resp.ContentLength)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("get gs://%s/%s: %w", c.bucket, key, classifyGCS(err))
	}
	return b, nil
}

// Open reads the object at key as it arrives, with the generation it
// read (what the reader remembers the record under): errors as Get's.
// Only opening is retried; a body cut short is the reader's error.
func (c *GCS) Open(ctx context.Context, key string) (io.ReadCloser, string, error) {
	var resp *http.Response
	err := c.do(ctx, func() error {
		r, err := c.api.Objects.Get(c.bucket, key).Context(ctx).Download()
		if err != nil {
			return err
		}
		if r.ContentLength > c.max {
			r.Body.Close()
			return permanent{fmt.Errorf("%d bytes, larger than %d", r.ContentLength, c.max)}
		}
		resp = r
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("get gs://%s/%s: %w", c.bucket, key, classifyGCS(err))
	}
	return &limited{r: io.LimitReader(resp.Body, c.max+1), c: resp.Body, max: c.max, what: fmt.Sprintf("gs://%s/%s", c.bucket, key)},
		resp.Header.Get("X-Goog-Generation"), nil
}

// List lists the objects under prefix, every page: each object's name,
// generation (its Version: a new generation is a new record) and size. A
// failed page fails the listing, never shortens it; so does a listing
// that does not end (ErrEndlessListing): a page token given again, or more
// pages than MaxListed objects fill.
func (c *GCS) List(ctx context.Context, prefix string) ([]Object, error) {
	var out []Object
	token := ""
	seen := newPages(int(c.page))
	for {
		var page *storage.Objects
		err := c.do(ctx, func() error {
			var err error
			page, err = c.api.Objects.List(c.bucket).Context(ctx).Prefix(prefix).MaxResults(c.page).PageToken(token).
				Fields("nextPageToken", "items(name,generation,size,updated)").Do()
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("list gs://%s/%s: %w", c.bucket, prefix, classifyGCS(err))
		}
		for _, o := range page.Items {
			// updated is RFC 3339; one the store does not give, or that
			// does not parse, is no bound (zero).
			updated, _ := time.Parse(time.RFC3339Nano, o.Updated)
			out = append(out, Object{Key: o.Name, Version: strconv.FormatInt(o.Generation, 10), Size: int64(o.Size), Modified: updated})
		}
		if token = page.NextPageToken; token == "" {
			return out, nil
		}
		if err := seen.next(token, true); err != nil {
			return nil, fmt.Errorf("list gs://%s/%s: %w", c.bucket, prefix, err)
		}
	}
}

// permanent is an error that is not retried.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// do runs call, paced, retrying what GCS says may succeed later.
func (c *GCS) do(ctx context.Context, call func() error) error {
	bo := c.retry
	for try := 1; ; try++ {
		if err := c.limiter.Wait(ctx); err != nil {
			return err
		}
		err := call()
		if err == nil || try >= c.tries || !retryableGCS(ctx, err) {
			return err
		}
		select {
		case <-time.After(bo.Pause()):
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
	}
}

// retryableGCS: rate limits, timeouts, server errors and transport
// errors are; a denial, a missing object or a refused precondition is
// not.
func retryableGCS(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.As(err, new(permanent)) {
		return false
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code == http.StatusTooManyRequests || ge.Code == http.StatusRequestTimeout || ge.Code >= 500
	}
	var ue *url.Error
	return errors.As(err, &ue) || errors.Is(err, io.ErrUnexpectedEOF)
}

// classifyGCS wraps GCS's answers the callers tell apart: 404 is
// outcome.ErrNotFound, 401 and 403 ErrDenied.
func classifyGCS(err error) error {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		switch ge.Code {
		case http.StatusNotFound:
			return fmt.Errorf("%w: %w", outcome.ErrNotFound, err)
		case http.StatusForbidden, http.StatusUnauthorized:
			return fmt.Errorf("%w: %w", ErrDenied, err)
		}
	}
	return err
}
