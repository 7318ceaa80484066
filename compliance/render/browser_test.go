package render_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// chromium starts a headless Chromium (Debian's package) for one test and returns a tab.
// Without chromium the test is skipped, except in CI (CI set), which installs it: there
// a missing browser must fail, not turn the test into a silent skip.
func chromium(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium not found, and CI is set: the browser tests must run in CI (%v)", err)
		}
		t.Skip("chromium not installed (apt-get install chromium); CI runs this test")
	}
	out := &lockedBuffer{}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.WindowSize(1280, 900),
		chromedp.CombinedOutput(out),
		chromedp.UserDataDir(t.TempDir()),
		// chromedp adds --no-sandbox by itself when running as root.
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancel)
	// The first call starts the browser: no timeout on this context, or the browser
	// would die with the first step's.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v\n%s", err, out.String())
	}
	return ctx
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestHTML_rendersInChromium opens the CIS AWS 3.0 report from a file, as an auditor
// would, in headless Chromium: it renders with its title, every chart's SVG has a size,
// the console stays free of errors, and nothing is requested from anywhere but the file
// itself. Screenshots (screen and print) and a PDF go to the test's artifact directory
// (go test -artifacts -outputdir DIR keeps them).
func TestHTML_rendersInChromium(t *testing.T) {
	ctx := chromium(t)
	d := acmeDocument(t, "cis-aws-3.0")
	file := filepath.Join(t.TempDir(), "cis-aws-3.0.html")
	if err := os.WriteFile(file, write(t, "html", d), 0o644); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	// Subscribe before navigating, so that no message or request is missed: the calls
	// subscribe, here, and the goroutines only drain (subscribing inside them raced the
	// navigation, and the request watch sometimes saw nothing).
	watch, stop := context.WithCancel(tctx)
	defer stop()
	var mu sync.Mutex
	var consoleErrs, requests []string
	var wg sync.WaitGroup
	console := chromedp.Console(watch)
	sent := chromedp.Events(watch, network.RequestWillBeSent)
	wg.Go(func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException || m.Type == chromedp.ConsoleWarning {
				mu.Lock()
				consoleErrs = append(consoleErrs, m.String())
				mu.Unlock()
			}
		}
	})
	wg.Go(func() {
		for ev, err := range sent {
			if err != nil {
				return
			}
			mu.Lock()
			requests = append(requests, ev.Request.URL)
			mu.Unlock()
		}
	})

	url := "file://" + file
	if err := chromedp.Do(tctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.ID("controls"))); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	title, err := chromedp.Run(tctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if want := "CIS Amazon Web Services Foundations Benchmark 3.0.0 — compliance report"; title != want {
		t.Errorf("title = %q, want %q", title, want)
	}
	sizes, err := chromedp.Run(tctx, chromedp.Evaluate[string](`JSON.stringify(Array.from(document.querySelectorAll("svg.chart"),
		s => { const r = s.getBoundingClientRect(); return {id: s.id, w: r.width, h: r.height}; }))`))
	if err != nil {
		t.Fatal(err)
	}
	var charts []struct {
		ID string  `json:"id"`
		W  float64 `json:"w"`
		H  float64 `json:"h"`
	}
	if err := json.Unmarshal([]byte(sizes), &charts); err != nil {
		t.Fatalf("chart sizes %s: %v", sizes, err)
	}
	if len(charts) != 4 {
		t.Errorf("%d charts rendered, want 4: %s", len(charts), sizes)
	}
	for _, c := range charts {
		if c.W <= 0 || c.H <= 0 {
			t.Errorf("chart %s renders at %vx%v", c.ID, c.W, c.H)
		}
	}
	rows, err := chromedp.Run(tctx, chromedp.Evaluate[int](`document.querySelectorAll('tr[id^="control-"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	if rows != len(d.Report.Controls) {
		t.Errorf("%d control rows rendered, want %d", rows, len(d.Report.Controls))
	}
	// A folded piece of evidence opens.
	open, err := chromedp.Run(tctx, chromedp.Evaluate[bool](`(() => { const d = document.querySelector("#evidence-5\\.2 details");
		d.querySelector("summary").click(); return d.open && d.querySelector("table").getBoundingClientRect().height > 0; })()`))
	if err != nil || !open {
		t.Errorf("the evidence of 5.2 does not open: %v", err)
	}

	dir := t.ArtifactDir()
	for name, shot := range map[string]chromedp.Action[[]byte]{
		"cis-aws-3.0-top.png":    chromedp.CaptureScreenshot(),
		"cis-aws-3.0-charts.png": chromedp.Screenshot(chromedp.ID("charts")),
		"cis-aws-3.0.png":        chromedp.FullScreenshot(100),
	} {
		png, err := chromedp.Run(tctx, shot)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Fatalf("screenshot %s is not a PNG", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	width, err := chromedp.Run(tctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil || width > 1280 {
		t.Errorf("the page is %dpx wide in a 1280px window (%v): something overflows", width, err)
	}
	// The print stylesheet: the navigation goes, the page still renders; and a PDF.
	if err := chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"})
		return err
	})); err != nil {
		t.Fatal(err)
	}
	navShown, err := chromedp.Run(tctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("nav")).display`))
	if err != nil || navShown != "none" {
		t.Errorf("in print, the navigation's display is %q (%v), want none", navShown, err)
	}
	png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cis-aws-3.0-print.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	pdf, err := chromedp.Call(tctx, page.PrintToPDF, page.PrintToPDFParams{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf.Data, []byte("%PDF")) {
		t.Error("printing gave no PDF")
	}
	if err := os.WriteFile(filepath.Join(dir, "cis-aws-3.0.pdf"), pdf.Data, 0o644); err != nil {
		t.Fatal(err)
	}

	stop()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(consoleErrs) > 0 {
		t.Errorf("console: %s", strings.Join(consoleErrs, "\n"))
	}
	if len(requests) == 0 {
		t.Error("no request seen at all: the request watch does not work")
	}
	for _, r := range requests {
		if !strings.HasPrefix(r, "file://") {
			t.Errorf("the page requested %s: it must need nothing but its file", r)
		}
	}
	t.Logf("%d charts, %d controls, requests %v; screenshots and PDF in %s", len(charts), rows, requests, dir)
}
