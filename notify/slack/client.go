package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Defaults of a Client.
const (
	DefaultMaxAttempts = 5
	DefaultMaxWait     = 2 * time.Minute
	DefaultBackoff     = time.Second
	// DefaultInterval spaces the messages of one report: Slack allows about
	// one message a second per webhook.
	DefaultInterval = time.Second
	defaultTimeout  = 30 * time.Second
)

// Client posts messages to one incoming webhook. Its URL is the webhook's
// secret: no error or log line it produces contains it.
type Client struct {
	URL  string
	HTTP *http.Client
	// MaxAttempts bounds the attempts per message (429 and 5xx and network
	// errors are retried; other 4xx are not).
	MaxAttempts int
	// MaxWait bounds the total time one message waits between attempts
	// (default DefaultMaxWait); a Retry-After beyond what is left fails the
	// message at once.
	MaxWait time.Duration
	// Backoff is the first wait after a 5xx or network error, doubled each time.
	Backoff time.Duration
	// Interval is the pause between the messages of one Send (0:
	// DefaultInterval; negative: none).
	Interval time.Duration
	// Sleep waits for d or until ctx is done (tests replace it).
	Sleep func(ctx context.Context, d time.Duration) error
}

// Error is a webhook's refusal: the HTTP status and Slack's own word from
// the response body (invalid_payload, channel_not_found, ...), if it gave one.
type Error struct {
	Status   int
	Word     string
	Attempts int
	// Detail says more, such as why retrying stopped.
	Detail string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("slack webhook answered %d", e.Status)
	if e.Word != "" {
		s += " " + e.Word
	} else if t := http.StatusText(e.Status); t != "" {
		s += " (" + t + ")"
	}
	if e.Attempts > 1 {
		s += fmt.Sprintf(" after %d attempts", e.Attempts)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if h := hints[e.Word]; h != "" {
		s += " — " + h
	}
	return s
}

var hints = map[string]string{
	"invalid_payload":     "Slack could not read the message (a bug in reclaim: please report it)",
	"invalid_blocks":      "Slack refused a block (a bug in reclaim: please report it)",
	"channel_not_found":   "the webhook's channel no longer exists; make a new webhook",
	"channel_is_archived": "the webhook's channel is archived; unarchive it or make a new webhook",
	"action_prohibited":   "the workspace restricts this webhook",
	"no_service":          "the webhook was removed or disabled; make a new one",
	"no_active_hooks":     "the webhook was removed or disabled; make a new one",
	"invalid_token":       "the webhook URL is wrong or revoked",
}

// slackWord is what a Slack error body looks like: one short lowercase word.
var slackWord = regexp.MustCompile(`^[a-z][a-z0-9_]{1,63}$`)

// Send posts the messages in order, Interval apart, stopping at the first
// that fails.
func (c *Client) Send(ctx context.Context, msgs []Message) error {
	for i, m := range msgs {
		if i > 0 && c.interval() > 0 {
			if err := c.sleep(ctx, c.interval()); err != nil {
				return fmt.Errorf("message %d of %d not sent: %w", i+1, len(msgs), err)
			}
		}
		if err := c.Post(ctx, m); err != nil {
			if len(msgs) > 1 {
				return fmt.Errorf("message %d of %d: %w", i+1, len(msgs), err)
			}
			return err
		}
	}
	return nil
}

// Post posts one message: 2xx is success; 429 waits Retry-After seconds and
// 5xx and network errors back off, within MaxAttempts and MaxWait; any other
// status fails at once with Slack's word.
func (c *Client) Post(ctx context.Context, m Message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("slack message: %w", err)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: defaultTimeout}
	}
	attempts := c.MaxAttempts
	if attempts < 1 {
		attempts = DefaultMaxAttempts
	}
	budget := c.MaxWait
	if budget <= 0 {
		budget = DefaultMaxWait
	}
	backoff := c.Backoff
	if backoff <= 0 {
		backoff = DefaultBackoff
	}
	var waited time.Duration
	for n := 1; ; n++ {
		status, word, retryAfter, err := c.once(ctx, hc, body)
		var wait time.Duration
		var fail error
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return fmt.Errorf("slack webhook: %w", ctx.Err())
			}
			fail = fmt.Errorf("slack webhook: %w", err)
			wait = backoff
			backoff *= 2
		case status >= 200 && status < 300:
			return nil
		case status == http.StatusTooManyRequests:
			if word == "" {
				word = "rate_limited"
			}
			fail = &Error{Status: status, Word: word, Attempts: n}
			wait = retryAfter
			if wait <= 0 {
				wait = backoff
				backoff *= 2
			}
		case status >= 500:
			fail = &Error{Status: status, Word: word, Attempts: n}
			wait = backoff
			backoff *= 2
		default:
			return &Error{Status: status, Word: word, Attempts: n}
		}
		if n >= attempts {
			return fail
		}
		if waited+wait > budget {
			if e, ok := fail.(*Error); ok {
				e.Detail = fmt.Sprintf("the next wait (%s) would exceed the %s allowed", wait, budget)
				return e
			}
			return fmt.Errorf("%w (gave up: the next wait would exceed the %s allowed)", fail, budget)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%w (then: %v)", fail, err)
		}
		waited += wait
	}
}

// once makes one POST. Errors never contain the URL.
func (c *Client) once(ctx context.Context, hc *http.Client, body []byte) (status int, word string, retryAfter time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return 0, "", 0, errors.New("the webhook URL cannot be used") // the parse error would quote it
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the URL
		}
		return 0, "", 0, fmt.Errorf("POST: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, wordOf(b), parseRetryAfter(resp.Header.Get("Retry-After")), nil
}

// wordOf finds Slack's error word in a response body: the bare string
// webhooks answer with ("channel_not_found"), or the "error" of a JSON body.
// A 5xx body may be an HTML page: no word.
func wordOf(b []byte) string {
	s := strings.TrimSpace(string(b))
	if slackWord.MatchString(s) {
		return s
	}
	var js struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(b, &js) == nil && slackWord.MatchString(js.Error) {
		return js.Error
	}
	return ""
}

// parseRetryAfter reads Retry-After as whole seconds (what Slack sends) or
// an HTTP date; 0 if absent or unreadable.
func parseRetryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

func (c *Client) interval() time.Duration {
	if c.Interval < 0 {
		return 0
	}
	if c.Interval == 0 {
		return DefaultInterval
	}
	return c.Interval
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
