// Package push sends a run's figures to a Prometheus Pushgateway, so that a
// CronJob's results reach Prometheus without a sidecar or a scrape target
// that outlives the Job.
//
// It is a plain HTTP client rather than client_golang's push package: that
// package pushes prometheus.Collectors, and the figures exist already as
// the OpenMetrics text report/export writes (every family a gauge); parsing
// that text back into collectors only to serialise it again would add a
// second rendering that could drift from the first. The Pushgateway reads
// the text exposition format, which that text is (its "# EOF" is a comment
// there).
package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultTimeout bounds a push: connection, request and response.
const DefaultTimeout = 30 * time.Second

// ContentType is what the Pushgateway is told the body is: the text
// exposition format, which the OpenMetrics gauges written are too.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// CheckURL says whether gateway names a Pushgateway: http(s)://HOST[:PORT][/prefix].
func CheckURL(gateway string) error {
	u, err := url.Parse(gateway)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return fmt.Errorf("push URL %q: want the Pushgateway's http(s)://HOST:PORT (e.g. http://pushgateway.monitoring.svc:9091)", gateway)
	}
	return nil
}

// GroupURL is the Pushgateway URL of the group job=job with the given
// grouping labels (name, value pairs, in order): /metrics/job/JOB/NAME/VALUE…
// A value that is empty or holds a slash is base64url-encoded, as the
// Pushgateway's API asks.
func GroupURL(gateway, job string, labels ...string) (string, error) {
	if err := CheckURL(gateway); err != nil {
		return "", err
	}
	if job == "" || len(labels)%2 != 0 {
		return "", errors.New("push: a job name and label name/value pairs are needed")
	}
	path := "/metrics/" + segment("job", job)
	for i := 0; i < len(labels); i += 2 {
		path += "/" + segment(labels[i], labels[i+1])
	}
	return strings.TrimRight(gateway, "/") + path, nil
}

func segment(name, value string) string {
	if value == "" || strings.Contains(value, "/") {
		return name + "@base64/" + base64URL(value)
	}
	return name + "/" + url.PathEscape(value)
}

// Push PUTs body (the run's OpenMetrics text) to the group at groupURL,
// replacing what the group held: the latest run of a scenario replaces the
// one before, and Prometheus keeps the history. A refusal is an error with
// the Pushgateway's status and its words.
func Push(ctx context.Context, client *http.Client, groupURL string, body []byte) error {
	if client == nil {
		client = &http.Client{Timeout: DefaultTimeout}
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, groupURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", ContentType)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("push to %s: %w", groupURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return nil
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return fmt.Errorf("push to %s: the Pushgateway answered %s: %s", groupURL, resp.Status, strings.TrimSpace(string(msg)))
}
