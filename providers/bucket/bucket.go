// Package bucket reads and writes the objects of one S3 bucket: the
// cluster records agents publish (inventory/published). A put replaces an
// object whole, or not at all: S3 never shows a reader part of a put, so
// an agent killed mid-write leaves the record it replaced.
package bucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/providers/awsclient"
)

// Defaults. S3 serves at least 5,500 GETs a second per prefix: a deleter
// reading a thousand records is paced by their size, not by reclaim.
const (
	DefaultRequestsPerSecond = 1000
	DefaultBurst             = 1000
	DefaultMaxAttempts       = 5
	// DefaultMaxObject bounds what Get reads of one object.
	DefaultMaxObject = 256 << 20
)

// ErrDenied is what a call S3 refused with 403 wraps: the identity lacks
// the grant, or the bucket is not the expected owner's.
var ErrDenied = errors.New("access denied")

// Options say which bucket, and how it is reached.
type Options struct {
	// Service's Account is the bucket owner's: every call names it
	// (ExpectedBucketOwner), so a bucket of the same name in another
	// account is never read or written.
	awsclient.Service
	Bucket string
	// PathStyle addresses the bucket in the path (S3-compatible servers).
	PathStyle bool
	// MaxObject bounds what Get reads (default DefaultMaxObject).
	MaxObject int64
}

// Client is one bucket.
type Client struct {
	api    *s3.Client
	bucket string
	owner  *string
	max    int64
}

// New builds the client. It calls nothing.
func New(ctx context.Context, o Options) (*Client, error) {
	if o.Bucket == "" {
		return nil, errors.New("bucket: no bucket name")
	}
	c, err := o.Load(ctx, "s3", DefaultRequestsPerSecond, DefaultBurst, DefaultMaxAttempts)
	if err != nil {
		return nil, err
	}
	api := s3.NewFromConfig(c.Config, func(so *s3.Options) {
		c.Into(&so.BaseEndpoint, &so.Retryer, &so.APIOptions, c.Pace)
		so.UsePathStyle = o.PathStyle
	})
	m := o.MaxObject
	if m <= 0 {
		m = DefaultMaxObject
	}
	return &Client{api: api, bucket: o.Bucket, owner: aws.String(o.Account), max: m}, nil
}

// Put writes body at key, replacing what was there in one step.
func (c *Client) Put(ctx context.Context, key string, body []byte) error {
	_, err := c.api.PutObject(ctx, &s3.PutObjectInput{Bucket: &c.bucket, Key: &key, Body: bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))), ContentType: aws.String("application/gzip"), ExpectedBucketOwner: c.owner})
	if err != nil {
		return fmt.Errorf("put s3://%s/%s: %w", c.bucket, key, classify(err))
	}
	return nil
}

// Get reads the object at key: an error wrapping outcome.ErrNotFound
// when there is none, ErrDenied when S3 refuses.
func (c *Client) Get(ctx context.Context, key string) ([]byte, error) {
	out, err := c.api.GetObject(ctx, &s3.GetObjectInput{Bucket: &c.bucket, Key: &key, ExpectedBucketOwner: c.owner})
	if err != nil {
		return nil, fmt.Errorf("get s3://%s/%s: %w", c.bucket, key, classify(err))
	}
	defer out.Body.Close()
	b, err := io.ReadAll(io.LimitReader(out.Body, c.max+1))
	if err != nil {
		return nil, fmt.Errorf("get s3://%s/%s: reading: %w", c.bucket, key, err)
	}
	if int64(len(b)) > c.max {
		return nil, fmt.Errorf("get s3://%s/%s: larger than %d bytes", c.bucket, key, c.max)
	}
	if out.ContentLength != nil && *out.ContentLength != int64(len(b)) {
		return nil, fmt.Errorf("get s3://%s/%s: read %d of %d bytes", c.bucket, key, len(b), *out.ContentLength)
	}
	return b, nil
}

// List lists every object under prefix, every page of it (ListObjectsV2,
// 1,000 keys a page): a failed page fails the listing, never shortens it.
// So does a listing that does not end (ErrEndlessListing): a continuation
// token given again, a truncated page without one, or more pages than
// MaxListed objects fill. The paginator alone would stop on a repeated
// token (StopOnDuplicateToken) and on a missing one, as if the listing
// were whole.
func (c *Client) List(ctx context.Context, prefix string) ([]Object, error) {
	var out []Object
	p := s3.NewListObjectsV2Paginator(c.api, &s3.ListObjectsV2Input{Bucket: &c.bucket, Prefix: aws.String(prefix), ExpectedBucketOwner: c.owner},
		func(o *s3.ListObjectsV2PaginatorOptions) { o.StopOnDuplicateToken = true })
	seen := newPages(1000)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list s3://%s/%s: %w", c.bucket, prefix, classify(err))
		}
		for _, o := range page.Contents {
			out = append(out, Object{Key: aws.ToString(o.Key), Version: aws.ToString(o.ETag), Size: aws.ToInt64(o.Size), Modified: aws.ToTime(o.LastModified)})
		}
		if err := seen.next(aws.ToString(page.NextContinuationToken), aws.ToBool(page.IsTruncated)); err != nil {
			return nil, fmt.Errorf("list s3://%s/%s: %w", c.bucket, prefix, err)
		}
	}
	return out, nil
}

// Open reads the object at key as it arrives: its body (at most the
// client's MaxObject bytes: more is an error when read) and the version
// the GET returned (its ETag), which is the one read, whatever a listing
// said before. Errors as Get's; the caller closes the body.
func (c *Client) Open(ctx context.Context, key string) (io.ReadCloser, string, error) {
	out, err := c.api.GetObject(ctx, &s3.GetObjectInput{Bucket: &c.bucket, Key: &key, ExpectedBucketOwner: c.owner})
	if err != nil {
		return nil, "", fmt.Errorf("get s3://%s/%s: %w", c.bucket, key, classify(err))
	}
	if out.ContentLength != nil && *out.ContentLength > c.max {
		out.Body.Close()
		return nil, "", fmt.Errorf("get s3://%s/%s: %d bytes, larger than %d", c.bucket, key, *out.ContentLength, c.max)
	}
	return &limited{r: io.LimitReader(out.Body, c.max+1), c: out.Body, max: c.max, what: fmt.Sprintf("s3://%s/%s", c.bucket, key)},
		aws.ToString(out.ETag), nil
}

// limited is a body read to at most max bytes: one more is an error.
type limited struct {
	r    io.Reader
	c    io.Closer
	n    int64
	max  int64
	what string
}

func (l *limited) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.max {
		return n, fmt.Errorf("get %s: larger than %d bytes", l.what, l.max)
	}
	return n, err
}

func (l *limited) Close() error { return l.c.Close() }

// classify wraps S3's answers the callers tell apart.
func classify(err error) error {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case http.StatusNotFound:
			return fmt.Errorf("%w: %w", outcome.ErrNotFound, err)
		case http.StatusForbidden:
			return fmt.Errorf("%w: %w", ErrDenied, err)
		}
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound") {
		return fmt.Errorf("%w: %w", outcome.ErrNotFound, err)
	}
	return err
}
