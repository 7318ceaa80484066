package gates

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/ssh"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates/sign"
	"github.com/warden-sec/warden/internal/suggest"
	"github.com/warden-sec/warden/internal/yamlerr"
	"github.com/warden-sec/warden/store"
)

// Defaults of the gates: section, used where a key is absent.
const (
	// DefaultExpiry is how long a request waits for its approvals.
	DefaultExpiry = 24 * time.Hour
	// DefaultQuorum is the number of approvals a risk needs unless Quorum says otherwise;
	// critical risk needs DefaultCriticalQuorum.
	DefaultQuorum         = 1
	DefaultCriticalQuorum = 2
)

// Config is the gates: section of warden's config: which risks run unattended, which wait
// for whose approval and how many, and which never run.
//
// The zero Config is the default: low (and none) applied automatically, medium and above
// waiting for approval (one approver; two for critical), requests expiring after 24h,
// nothing refused, no approvers (until some are listed, nothing that needs approval can
// get it), and checked decisions: every decision must be signed by a key gates.signers
// lists, unless UncheckedNames says otherwise.
type Config struct {
	// Auto are the risks applied without approval. nil means the default, [low]; an
	// empty, non-nil list makes nothing automatic. RiskNone is automatic unless refused.
	// The list is taken literally: auto: [medium] leaves low waiting for approval.
	Auto []findings.Risk `yaml:"auto"`
	// Approvers are the identities allowed to decide: CLI actor names now, Slack user
	// ids and web logins when those channels come.
	Approvers []string `yaml:"approvers"`
	// Quorum is the number of distinct approvers each risk needs; absent risks need
	// DefaultQuorum, critical DefaultCriticalQuorum.
	Quorum map[findings.Risk]int `yaml:"quorum"`
	// Expiry is how long a request waits unanswered before it expires (0: DefaultExpiry).
	Expiry time.Duration `yaml:"expiry"`
	// Refuse are the risks never applied, automatically or by approval.
	Refuse []findings.Risk `yaml:"refuse"`
	// Signers maps an approver to its SSH public keys (authorized_keys lines, as git's
	// allowed signers), and sign.Replicas ("@replicas") to the keys of the replicas that
	// sign web and Slack decisions. Unless UncheckedNames is set, every decision must carry
	// a signature by a key listed for its actor, and every approver must have a key.
	Signers map[string][]string `yaml:"signers"`
	// UncheckedNames accepts decisions that are names nobody checks: an approver is
	// whoever claims to be one (WARDEN_ACTOR, a row in the database). It is for demos
	// and trials only; warden warns at every run that uses it, and it cannot be set with
	// Signers.
	UncheckedNames bool `yaml:"unchecked_names"`
	// ReplicaKeyFile is the private SSH key warden serve signs web and Slack decisions
	// with; empty: replica.key beside the default database, created on first use.
	ReplicaKeyFile string `yaml:"replica_key_file"`

	// lines locate each field ("auto[1]", "quorum.critical") in the YAML it was read
	// from, for errors; nil for a Config built in Go.
	lines map[string]int
}

// ConfigError is a problem with the gates: section. Line is its line in the YAML it was
// read from, or 0 for a Config built in Go; Field is the key below gates: ("quorum.critical").
// Its Detail is the error without the line ("gates.quorum.critical: …").
type ConfigError = yamlerr.Error

// configError is a problem with field of the gates: section, at line.
func configError(line int, field, msg string) *ConfigError {
	return &ConfigError{Section: "gates", Line: line, Field: field, Msg: msg}
}

// Kind is what the gates do with an action of some risk.
type Kind int

// Verdict kinds.
const (
	// NeedsApproval actions wait for Quorum distinct approvers.
	NeedsApproval Kind = iota
	// Auto actions run without approval.
	Auto
	// Refused actions never run.
	Refused
)

func (k Kind) String() string {
	switch k {
	case Auto:
		return "auto"
	case Refused:
		return "refused"
	}
	return "approval"
}

// Verdict is the gates' rule for one risk.
type Verdict struct {
	Kind Kind
	// Auto and Refused repeat Kind, for readable conditions at call sites.
	Auto, Refused bool
	// Quorum is the number of distinct approvers needed (NeedsApproval only).
	Quorum int
	// Reason says why the action is refused (Refused only).
	Reason string
}

// NeedsApproval reports whether the action waits for approvers.
func (v Verdict) NeedsApproval() bool { return v.Kind == NeedsApproval }

// Verdict says what the gates do with an action of risk r. A risk outside the known
// range is refused: the gates fail closed.
func (c Config) Verdict(r findings.Risk) Verdict {
	switch {
	case r < findings.RiskNone || r > findings.RiskCritical:
		return Verdict{Kind: Refused, Refused: true, Reason: fmt.Sprintf("unknown risk %s: the gates apply nothing they cannot rank", r)}
	case slices.Contains(c.Refuse, r):
		return Verdict{Kind: Refused, Refused: true, Reason: fmt.Sprintf("the gates refuse %s-risk actions (gates.refuse)", r)}
	case r == findings.RiskNone || slices.Contains(c.auto(), r):
		return Verdict{Kind: Auto, Auto: true}
	}
	return Verdict{Kind: NeedsApproval, Quorum: c.quorum(r)}
}

// ExpiryOrDefault is how long a request waits: Expiry, or DefaultExpiry when unset.
func (c Config) ExpiryOrDefault() time.Duration {
	if c.Expiry <= 0 {
		return DefaultExpiry
	}
	return c.Expiry
}

// Checked reports whether decisions must be signed by a key gates.signers lists: always,
// unless gates.unchecked_names is set.
func (c Config) Checked() bool { return !c.UncheckedNames }

// SignerKeys are the public keys listed for name under gates.signers (sign.Replicas for
// the replicas' keys); a key that does not parse is left out (validating reports it).
func (c Config) SignerKeys(name string) []ssh.PublicKey {
	var out []ssh.PublicKey
	for _, line := range c.Signers[name] {
		if k, err := sign.ParseKey(line); err == nil {
			out = append(out, k)
		}
	}
	return out
}

// ListsReplicaKey reports whether gates.signers lists k under sign.Replicas: whether web
// and Slack decisions signed with it count.
func (c Config) ListsReplicaKey(k ssh.PublicKey) bool {
	fp := sign.Fingerprint(k)
	return slices.ContainsFunc(c.SignerKeys(sign.Replicas), func(l ssh.PublicKey) bool { return sign.Fingerprint(l) == fp })
}

// ReplicaKeyPath is the file warden serve signs web and Slack decisions with when
// $WARDEN_REPLICA_KEY is not set: gates.replica_key_file, else replica.key beside the
// default database.
func (c Config) ReplicaKeyPath() (string, error) {
	if c.ReplicaKeyFile != "" {
		return c.ReplicaKeyFile, nil
	}
	db, err := store.DefaultPath()
	if err != nil {
		return "", fmt.Errorf("the replica's signing key: %w", err)
	}
	return filepath.Join(filepath.Dir(db), "replica.key"), nil
}

// UncheckedWarning is what every run of warden says when its decisions are unchecked
// names (gates.unchecked_names), "" when they are checked.
func (c Config) UncheckedWarning() string {
	if c.Checked() {
		return ""
	}
	return "warning: decisions are unchecked names (gates.unchecked_names): anyone who can run warden approve or write the database can decide as any approver; list keys under gates.signers and remove unchecked_names to require signed decisions (docs/approvals.md, Signed decisions)"
}

// IsApprover reports whether actor may decide requests.
func (c Config) IsApprover(actor string) bool { return slices.Contains(c.Approvers, actor) }

func (c Config) auto() []findings.Risk {
	if c.Auto == nil {
		return []findings.Risk{findings.RiskLow}
	}
	return c.Auto
}

func (c Config) quorum(r findings.Risk) int {
	if q, ok := c.Quorum[r]; ok {
		return q
	}
	if r == findings.RiskCritical {
		return DefaultCriticalQuorum
	}
	return DefaultQuorum
}

// Validate checks the config: unknown risks, a risk both automatic and refused, a risk
// listed twice, a quorum below one, a quorum for a risk that never waits for approval,
// duplicate or empty approvers, a non-positive expiry, and a quorum larger than the
// approvers listed (CheckQuorum with no other channel). Every problem of the fields is
// reported (errors.Join of *ConfigError, one *ConfigError when there is one); the
// quorum's only when the fields have none.
func (c Config) Validate() error {
	if errs := c.validateFields(); len(errs) > 0 {
		return yamlerr.Join(errs)
	}
	return c.CheckQuorum(0, false)
}

// validateFields is Validate without the quorum check, which needs every channel's
// approvers: every problem, in the order of the fields.
func (c Config) validateFields() []*ConfigError {
	var errs []*ConfigError
	add := func(field, format string, args ...any) { errs = append(errs, c.errorf(field, format, args...)) }
	risks := func(field string, rs []findings.Risk) {
		for i, r := range rs {
			f := fmt.Sprintf("%s[%d]", field, i)
			if r < findings.RiskNone || r > findings.RiskCritical {
				add(f, "unknown risk %s", r)
			} else if j := slices.Index(rs, r); j < i {
				add(f, "%s is listed twice (also %s[%d])", r, field, j)
			}
		}
	}
	risks("auto", c.Auto)
	risks("refuse", c.Refuse)
	for i, r := range c.Refuse {
		if j := slices.Index(c.Auto, r); j >= 0 {
			add(fmt.Sprintf("refuse[%d]", i), "%s is also in gates.auto%s: a risk is either applied automatically or refused", r, c.lineNote(fmt.Sprintf("auto[%d]", j)))
		}
	}
	for i, a := range c.Approvers {
		f := fmt.Sprintf("approvers[%d]", i)
		if strings.TrimSpace(a) == "" {
			add(f, "empty approver name")
		} else if j := slices.Index(c.Approvers, a); j < i {
			add(f, "%q is listed twice (also approvers[%d])", a, j)
		}
	}
	for _, r := range sortedRisks(c.Quorum) {
		q, f := c.Quorum[r], "quorum."+r.String()
		switch v := c.Verdict(r); {
		case r < findings.RiskNone || r > findings.RiskCritical:
			add(f, "unknown risk %s", r)
		case q < 1:
			add(f, "quorum %d: a request needs at least 1 approval (to apply without approval, add %s to gates.auto)", q, r)
		case !v.NeedsApproval():
			add(f, "%s-risk actions never wait for approval (%s): remove this quorum", r, v.Kind)
		}
	}
	if c.Expiry < 0 {
		add("expiry", "%s: want a positive duration such as 24h", c.Expiry)
	}
	errs = append(errs, c.validateSigners()...)
	return errs
}

// CheckQuorum refuses a quorum no set of approvers can reach: more distinct approvals
// than gates.approvers lists plus others, the approvers other channels add (Slack users
// listed in slack.approvers and not mapped to a gates approver). unbounded means a channel
// adds approvers whose number only it knows (a Slack user group): nothing is refused
// then. The config calls it once every channel's section is read; Validate calls it
// with none.
//
// An unreachable quorum is an error, not a warning: every request of that risk would
// wait until it expired. It is judged only when approvers are listed; with none, nothing
// can be approved at all, which is the fail-closed default of an unconfigured warden
// (Decide then says that no approvers are configured).
func (c Config) CheckQuorum(others int, unbounded bool) error {
	n := len(c.Approvers) + others
	if n == 0 || unbounded {
		return nil
	}
	for _, r := range findings.Risks {
		v := c.Verdict(r)
		if !v.NeedsApproval() || v.Quorum <= n {
			continue
		}
		field, how := "approvers", "the default quorum"
		if _, ok := c.Quorum[r]; ok {
			field, how = "quorum."+r.String(), "gates.quorum"
		}
		lists := fmt.Sprintf("gates.approvers lists %d", len(c.Approvers))
		if others > 0 {
			lists = fmt.Sprintf("gates.approvers and the other channels list %d", n)
		}
		return c.errorf(field, "%s-risk actions need %d distinct approvals (%s) but %s: list more approvers, lower quorum.%s, or refuse %s",
			r, v.Quorum, how, lists, r, r)
	}
	return nil
}

// validateSigners checks gates.signers: each key parses, each name is an approver or
// sign.Replicas, and, unless unchecked_names is set (which refuses signers), every
// approver has a key.
func (c Config) validateSigners() []*ConfigError {
	if c.UncheckedNames {
		if len(c.Signers) > 0 {
			return []*ConfigError{c.errorf("unchecked_names", "unchecked names and gates.signers exclude each other: remove unchecked_names to check decisions against the signers")}
		}
		return nil
	}
	var errs []*ConfigError
	names := make([]string, 0, len(c.Signers))
	for n := range c.Signers {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		f := "signers." + n
		if n != sign.Replicas && !c.IsApprover(n) {
			errs = append(errs, c.errorf(f, "%q is not in gates.approvers: list it there or remove its keys (%s names the replicas' keys)", n, sign.Replicas))
		}
		if len(c.Signers[n]) == 0 {
			errs = append(errs, c.errorf(f, "no keys: list at least one SSH public key"))
		}
		for i, line := range c.Signers[n] {
			fi := fmt.Sprintf("%s[%d]", f, i)
			if _, err := sign.ParseKey(line); err != nil {
				errs = append(errs, c.errorf(fi, "%v", err))
			}
		}
	}
	if len(c.Signers) == 0 && len(c.Approvers) > 0 {
		return append(errs, c.errorf("approvers", "gates.signers lists no keys: every approver signs its decisions; list each approver's SSH public key under gates.signers (ssh-add -L, or the .pub file of the key it signs with), or, for a demo or trial only, set gates.unchecked_names: true"))
	}
	for i, a := range c.Approvers {
		if _, ok := c.Signers[a]; !ok && strings.TrimSpace(a) != "" && slices.Index(c.Approvers, a) == i {
			errs = append(errs, c.errorf(fmt.Sprintf("approvers[%d]", i), "%q has no key under gates.signers: every approver signs its decisions; list its SSH public key (ssh-add -L, or the .pub file of the key it signs with), or, for a demo or trial only, set gates.unchecked_names: true", a))
		}
	}
	return errs
}

func (c Config) errorf(field, format string, args ...any) *ConfigError {
	return configError(c.lines[field], field, fmt.Sprintf(format, args...))
}

func (c Config) lineNote(field string) string {
	if l := c.lines[field]; l > 0 {
		return fmt.Sprintf(" (line %d)", l)
	}
	return ""
}

func sortedRisks(m map[findings.Risk]int) []findings.Risk {
	out := make([]findings.Risk, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

var configKeys = []string{"auto", "approvers", "quorum", "expiry", "refuse", "signers", "replica_key_file", "unchecked_names"}

var riskNames = []string{"none", "low", "medium", "high", "critical"}

// UnmarshalYAML reads the gates: section and validates it; errors are *ConfigError with
// the line of the offending key or item, every problem of the section (errors.Join of
// them when there are more than one, in the order of the file, then what validating
// finds). Unknown keys are errors, so that a typo (aprovers:) does not silently leave
// the default in force.
func (c *Config) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return configError(n.Line, "", "want a mapping with keys "+strings.Join(configKeys, ", "))
	}
	p := &parser{c: &Config{lines: map[string]int{"": n.Line}}}
	out := p.c
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if l, ok := seen[k.Value]; ok {
			p.add(configError(k.Line, k.Value, fmt.Sprintf("given twice (also line %d)", l)))
			continue
		}
		seen[k.Value] = k.Line
		out.lines[k.Value] = k.Line
		switch k.Value {
		case "auto":
			out.Auto = p.risks(k.Value, v)
		case "refuse":
			out.Refuse = p.risks(k.Value, v)
		case "approvers":
			out.Approvers = p.names(k.Value, v)
		case "quorum":
			out.Quorum = p.quorumMap(v)
		case "signers":
			out.Signers = p.signers(v)
		case "unchecked_names":
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" || v.Decode(&out.UncheckedNames) != nil {
				p.add(configError(v.Line, k.Value, "want true or false"))
			}
		case "replica_key_file":
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" || strings.TrimSpace(v.Value) == "" {
				p.add(configError(v.Line, k.Value, "want the path of a private SSH key file"))
			} else {
				out.ReplicaKeyFile = v.Value
			}
		case "expiry":
			var err error
			if out.Expiry, err = duration(v); err != nil {
				p.add(configError(v.Line, k.Value, err.Error()))
			}
		default:
			msg := fmt.Sprintf("unknown key (known: %s)", strings.Join(configKeys, ", "))
			if s := suggest.Closest(k.Value, configKeys); s != "" {
				msg = fmt.Sprintf("unknown key (did you mean %q?)", s)
			}
			p.add(configError(k.Line, k.Value, msg))
		}
	}
	// The quorum is checked by the config once the other channels' approvers are known.
	if err := yamlerr.Join(yamlerr.Merge(p.errs, out.validateFields())); err != nil {
		return err
	}
	*c = *out
	return nil
}

// parser reads the gates: section into c, collecting every problem.
type parser struct {
	c    *Config
	errs []*ConfigError
}

func (p *parser) add(e *ConfigError) { p.errs = append(p.errs, e) }

// unreadRisk stands for an item that is not a risk, so that the others keep their
// index; validating skips it, as its problem is reported already.
const unreadRisk = findings.Risk(-1)

// risks reads a list of risks. A list that cannot be read is empty: fewer risks
// automatic or refused make no other field wrong.
func (p *parser) risks(field string, v *yaml.Node) []findings.Risk {
	items, ok := p.sequence(field, v)
	if !ok {
		return []findings.Risk{}
	}
	out := make([]findings.Risk, 0, len(items))
	for i, it := range items {
		r, ok := p.risk(fmt.Sprintf("%s[%d]", field, i), it)
		if !ok {
			r = unreadRisk
		}
		out = append(out, r)
	}
	return out
}

func (p *parser) risk(field string, n *yaml.Node) (findings.Risk, bool) {
	p.c.lines[field] = n.Line
	if n.Kind != yaml.ScalarNode {
		p.add(configError(n.Line, field, "want a risk name (none, low, medium, high or critical)"))
		return 0, false
	}
	r, err := findings.ParseRisk(n.Value)
	if err != nil {
		msg := err.Error()
		if s := suggest.Closest(strings.ToLower(n.Value), riskNames); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		p.add(configError(n.Line, field, msg))
		return 0, false
	}
	return r, true
}

func (p *parser) names(field string, v *yaml.Node) []string {
	items, _ := p.sequence(field, v)
	out := make([]string, 0, len(items))
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		p.c.lines[f] = it.Line
		if it.Kind != yaml.ScalarNode || it.ShortTag() == "!!null" {
			p.add(configError(it.Line, f, "want a name"))
			continue
		}
		out = append(out, it.Value)
	}
	return out
}

// sequence accepts a YAML list, or the empty value (auto: with nothing after it) as an
// explicitly empty list.
func (p *parser) sequence(field string, v *yaml.Node) ([]*yaml.Node, bool) {
	switch {
	case v.Kind == yaml.SequenceNode:
		return v.Content, true
	case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null":
		return nil, true
	}
	p.add(configError(v.Line, field, fmt.Sprintf("want a list, such as %s: [low]", field)))
	return nil, false
}

func (p *parser) quorumMap(v *yaml.Node) map[findings.Risk]int {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		p.add(configError(v.Line, "quorum", "want a mapping of risk to approvals, such as {critical: 2}"))
		return nil
	}
	out := map[findings.Risk]int{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		field := "quorum." + k.Value
		r, ok := p.risk(field, k)
		if !ok {
			continue
		}
		if _, dup := out[r]; dup {
			p.add(configError(k.Line, field, "given twice"))
			continue
		}
		// Validate names the field by the canonical risk name.
		p.c.lines["quorum."+r.String()] = k.Line
		q, err := strconv.Atoi(val.Value)
		if val.Kind != yaml.ScalarNode || val.ShortTag() != "!!int" || err != nil {
			p.add(configError(val.Line, field, fmt.Sprintf("%q: want a whole number of approvals", val.Value)))
			continue
		}
		out[r] = q
	}
	return out
}

// signers reads gates.signers: a mapping of name to a list of public keys (one key may
// be given as a string).
func (p *parser) signers(v *yaml.Node) map[string][]string {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		p.add(configError(v.Line, "signers", "want a mapping of approver to SSH public keys, such as {carol: [\"ssh-ed25519 AAAA… carol\"]}"))
		return nil
	}
	out := map[string][]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		field := "signers." + k.Value
		if _, dup := out[k.Value]; dup {
			p.add(configError(k.Line, field, "given twice"))
			continue
		}
		p.c.lines[field] = k.Line
		if val.Kind == yaml.ScalarNode && val.ShortTag() == "!!str" {
			p.c.lines[field+"[0]"] = val.Line
			out[k.Value] = []string{val.Value}
			continue
		}
		keys := p.names(field, val)
		if keys == nil {
			keys = []string{}
		}
		out[k.Value] = keys
	}
	return out
}

func duration(v *yaml.Node) (time.Duration, error) {
	if v.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("want a duration such as 24h")
	}
	d, err := time.ParseDuration(v.Value)
	if err != nil {
		return 0, fmt.Errorf("%q: want a duration such as 24h or 90m", v.Value)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s: want a positive duration such as 24h", v.Value)
	}
	return d, nil
}
