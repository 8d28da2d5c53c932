// Package webdriver drives a headless Chromium for zkraft's browser tests
// over the W3C WebDriver protocol, spoken to Debian's chromedriver with
// net/http: a score of endpoints, so no client library. Only tests import
// it.
package webdriver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// Binaries names the browser and its driver, or says which Debian
// packages to install.
func Binaries() (chromium, chromedriver string, err error) {
	chromedriver, err = exec.LookPath("chromedriver")
	if err != nil {
		return "", "", fmt.Errorf("chromedriver not found (apt-get install chromium-driver): %w", err)
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if chromium, err = exec.LookPath(name); err == nil {
			return chromium, chromedriver, nil
		}
	}
	return "", "", fmt.Errorf("chromium not found (apt-get install chromium): %w", err)
}

// Driver is a running chromedriver.
type Driver struct {
	cmd      *exec.Cmd
	base     string
	chromium string
	hc       *http.Client
}

// Start runs chromedriver on a free loopback port and waits until it is
// ready.
func Start() (*Driver, error) {
	chromium, driver, err := Binaries()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("free port: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// chromedriver and the Chromium it starts share its process group,
	// which Close kills, and the kernel kills chromedriver if the test
	// binary dies first (the Chromium left then is scripts/gotest.sh's).
	cmd := testproc.Command(driver, "--port="+strconv.Itoa(port), "--allowed-ips=127.0.0.1")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start chromedriver: %w", err)
	}
	d := &Driver{cmd: cmd, base: fmt.Sprintf("http://127.0.0.1:%d", port), chromium: chromium, hc: &http.Client{Timeout: 60 * time.Second}}
	deadline := time.Now().Add(15 * time.Second)
	for {
		var status struct {
			Ready bool `json:"ready"`
		}
		if err := d.call("GET", "/status", nil, &status); err == nil && status.Ready {
			return d, nil
		}
		if time.Now().After(deadline) {
			d.Close()
			return nil, errors.New("chromedriver not ready within 15s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Close stops chromedriver and every browser it started.
func (d *Driver) Close() {
	testproc.Kill(d.cmd)
	_ = d.cmd.Wait()
}

// call sends one WebDriver command and decodes its "value" into out.
func (d *Driver) call(method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("webdriver %s: %w", path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, d.base+path, body)
	if err != nil {
		return fmt.Errorf("webdriver %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.hc.Do(req)
	if err != nil {
		return fmt.Errorf("webdriver %s: %w", path, err)
	}
	defer resp.Body.Close()
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return fmt.Errorf("webdriver %s: %s: %w", path, resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(env.Value, &e)
		return &Error{Code: e.Error, Message: e.Message}
	}
	if out != nil {
		if err := json.Unmarshal(env.Value, out); err != nil {
			return fmt.Errorf("webdriver %s: %w", path, err)
		}
	}
	return nil
}

// Error is a WebDriver error ("no such element", ...).
type Error struct{ Code, Message string }

// Error implements error: "webdriver: <code>: <message>".
func (e *Error) Error() string { return "webdriver: " + e.Code + ": " + e.Message }

// Session is one browser window.
type Session struct {
	d    *Driver
	path string // /session/<id>
	dir  string // the browser's profile directory
}

// NewSession starts a headless Chromium of width×height pixels.
func (d *Driver) NewSession(width, height int) (*Session, error) {
	dir, err := os.MkdirTemp("", "zkraft-chromium-")
	if err != nil {
		return nil, fmt.Errorf("profile dir: %w", err)
	}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{
			"binary": d.chromium,
			"args": []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
				"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
				"--disable-component-update", "--disable-sync", "--disable-default-apps", "--password-store=basic",
				"--use-mock-keychain", "--user-data-dir=" + dir, fmt.Sprintf("--window-size=%d,%d", width, height)},
		},
	}}}
	var out struct {
		SessionID string `json:"sessionId"`
	}
	if err := d.call("POST", "/session", caps, &out); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Session{d: d, path: "/session/" + out.SessionID, dir: dir}, nil
}

// Close ends the browser.
func (s *Session) Close() {
	_ = s.d.call("DELETE", s.path, nil, nil)
	os.RemoveAll(s.dir)
}

// Window is the handle of the current window (tab).
func (s *Session) Window() (string, error) {
	var h string
	err := s.d.call("GET", s.path+"/window", nil, &h)
	return h, err
}

// NewTab opens a blank tab in front and returns its handle; the current
// window stays the one commands go to until SwitchTo.
func (s *Session) NewTab() (string, error) {
	var out struct {
		Handle string `json:"handle"`
	}
	err := s.d.call("POST", s.path+"/window/new", map[string]string{"type": "tab"}, &out)
	return out.Handle, err
}

// SwitchTo makes the window handle names the current one, and brings it
// to the front.
func (s *Session) SwitchTo(handle string) error {
	return s.d.call("POST", s.path+"/window", map[string]string{"handle": handle}, nil)
}

// CloseWindow closes the current window (tab), as its user would; switch
// to another before the next command.
func (s *Session) CloseWindow() error { return s.d.call("DELETE", s.path+"/window", nil, nil) }

// DeleteCookies forgets every cookie of the page's domain.
func (s *Session) DeleteCookies() error { return s.d.call("DELETE", s.path+"/cookie", nil, nil) }

// Navigate loads url.
func (s *Session) Navigate(url string) error {
	return s.d.call("POST", s.path+"/url", map[string]string{"url": url}, nil)
}

// Element is an element of the page.
type Element struct {
	s  *Session
	id string
}

// elementKey is the W3C key of an element reference.
const elementKey = "element-6066-11e4-a52e-4f735466cecf"

// Find returns the first element matching a CSS selector.
func (s *Session) Find(css string) (Element, error) {
	var ref map[string]string
	if err := s.d.call("POST", s.path+"/element", map[string]string{"using": "css selector", "value": css}, &ref); err != nil {
		return Element{}, err
	}
	return Element{s: s, id: ref[elementKey]}, nil
}

// FindAll returns every element matching a CSS selector.
func (s *Session) FindAll(css string) ([]Element, error) {
	var refs []map[string]string
	if err := s.d.call("POST", s.path+"/elements", map[string]string{"using": "css selector", "value": css}, &refs); err != nil {
		return nil, err
	}
	out := make([]Element, len(refs))
	for i, r := range refs {
		out[i] = Element{s: s, id: r[elementKey]}
	}
	return out, nil
}

func (e Element) path() string { return e.s.path + "/element/" + e.id }

// Click clicks the element.
func (e Element) Click() error { return e.s.d.call("POST", e.path()+"/click", map[string]any{}, nil) }

// Clear empties an input or textarea.
func (e Element) Clear() error { return e.s.d.call("POST", e.path()+"/clear", map[string]any{}, nil) }

// SendKeys types text into the element.
func (e Element) SendKeys(text string) error {
	return e.s.d.call("POST", e.path()+"/value", map[string]string{"text": text}, nil)
}

// Text is the element's rendered text.
func (e Element) Text() (string, error) {
	var s string
	err := e.s.d.call("GET", e.path()+"/text", nil, &s)
	return s, err
}

// Displayed reports whether the element is shown.
func (e Element) Displayed() (bool, error) {
	var b bool
	err := e.s.d.call("GET", e.path()+"/displayed", nil, &b)
	return b, err
}

// Exec runs script (a function body; arguments in `arguments`) in the
// page, awaiting a returned promise, and decodes its result into out.
func (s *Session) Exec(out any, script string, args ...any) error {
	if args == nil {
		args = []any{}
	}
	return s.d.call("POST", s.path+"/execute/async", map[string]any{
		"script": "const done = arguments[arguments.length-1]; Promise.resolve((async () => {" + script + "})(...Array.from(arguments).slice(0, -1))).then(done, (e) => done('error: ' + e));",
		"args":   args,
	}, out)
}

// Screenshot returns a PNG of the window.
func (s *Session) Screenshot() ([]byte, error) {
	var b64 string
	if err := s.d.call("GET", s.path+"/screenshot", nil, &b64); err != nil {
		return nil, err
	}
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	return png, nil
}

// WaitText waits up to timeout for the first element matching css to be
// shown with text containing want, and returns its text.
func (s *Session) WaitText(css, want string, timeout time.Duration) (string, error) {
	var last string
	var lastErr error
	deadline := time.Now().Add(timeout)
	for {
		if e, err := s.Find(css); err == nil {
			if last, lastErr = e.Text(); lastErr == nil && bytes.Contains([]byte(last), []byte(want)) {
				return last, nil
			}
		} else {
			lastErr = err
		}
		if time.Now().After(deadline) {
			return last, fmt.Errorf("%s: no %q within %v (text %q, %v)", css, want, timeout, last, lastErr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitFind waits up to timeout for an element matching css to be shown.
func (s *Session) WaitFind(css string, timeout time.Duration) (Element, error) {
	deadline := time.Now().Add(timeout)
	for {
		e, err := s.Find(css)
		if err == nil {
			if shown, err2 := e.Displayed(); err2 == nil && shown {
				return e, nil
			}
			err = errors.New("not displayed")
		}
		if time.Now().After(deadline) {
			return Element{}, fmt.Errorf("%s: not shown within %v: %w", css, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
