package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/warden-sec/warden/gates"
)

// pageNames are the page templates under templates/, each rendered inside layout.html.
var pageNames = []string{"overview", "findings", "approvals", "bulk", "actions", "access", "audit", "reports", "tokens", "login", "error"}

func (d *Dashboard) parseTemplates() error {
	funcs := template.FuncMap{
		"time":     func(t time.Time) string { return fmtTime(t) },
		"ago":      func(t time.Time) string { return ago(d.now(), t) },
		"short":    shortUID,
		"until":    func(t time.Time) string { return expiresIn(d.now(), t) },
		"duration": fmtDuration,
		"pct":      func(v float64) string { return fmt.Sprintf("%.1f", v) },
		"coord":    f,
		"pretty":   prettyJSON,
		"query":    query,
		"add":      func(a, b int) int { return a + b },
		"json":     func(v any) string { b, _ := json.Marshal(v); return string(b) },
		"upper":    strings.ToUpper,
		// maxReason is the gate's limit of a decision's reason, which the field says.
		"maxReason": func() int { return gates.MaxReason },
		"now":       d.now,
		"deref":     func(p *float64) float64 { return *p },
		"role": func(name string) Role {
			r, err := ParseRole(name)
			if err != nil {
				panic(err) // a typo in a template, caught by the tests that render every page
			}
			return r
		},
		"dict": func(kv ...any) map[string]any {
			m := map[string]any{}
			for i := 0; i+1 < len(kv); i += 2 {
				k, _ := kv[i].(string)
				m[k] = kv[i+1]
			}
			return m
		},
	}
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html")
	if err != nil {
		return fmt.Errorf("dashboard: parse the layout: %w", err)
	}
	d.pages = map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := base.Clone()
		if err == nil {
			_, err = t.ParseFS(templateFiles, path.Join("templates", name+".html"))
		}
		if err != nil {
			return fmt.Errorf("dashboard: parse page %s: %w", name, err)
		}
		d.pages[name] = t
	}
	// Every template file is a page or the layout: one left out would never render.
	files, _ := fs.Glob(templateFiles, "templates/*.html")
	if len(files) != len(pageNames)+1 {
		return fmt.Errorf("dashboard: %d template files for %d pages and the layout", len(files), len(pageNames))
	}
	return nil
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + fmtDuration(-d)
	}
	return fmtDuration(d) + " ago"
}

// fmtDuration is a duration to the nearest sensible unit: 45s, 12m, 5h, 3d.
func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// prettyJSON indents a JSON value for a <pre>; anything else is shown as it is.
func prettyJSON(v any) string {
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		raw = b
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return "—"
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return string(raw)
	}
	return out.String()
}

// query builds a query string from key, value pairs, dropping empty values.
func query(kv ...any) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		s := fmt.Sprint(kv[i+1])
		if s != "" && s != "0" {
			v.Set(k, s)
		}
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}
