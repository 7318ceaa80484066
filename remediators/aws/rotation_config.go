package aws

import (
	"fmt"
	"strings"
	"time"
)

// Defaults of a rotation.
const (
	DefaultRotationSecretName  = "warden/iam/{account}/{user}"
	DefaultRotationRegion      = "us-east-1"
	DefaultRotationGrace       = 7 * 24 * time.Hour
	DefaultRotationDeleteAfter = 7 * 24 * time.Hour
	DefaultRotationRecheck     = 24 * time.Hour
)

// RotationConfig is the rotation: section of warden's config: where a rotated key is
// handed over and how long each period lasts.
type RotationConfig struct {
	// SecretName is the Secrets Manager secret a new key is stored in, a template of
	// {account}, {user} and {key} (the old key's id). Default DefaultRotationSecretName.
	SecretName string `yaml:"secret_name"`
	// Region is the Secrets Manager region. Default DefaultRotationRegion.
	Region string `yaml:"region"`
	// Grace is how long the old key stays active after the new one is stored (a Go
	// duration in YAML: "168h").
	Grace time.Duration `yaml:"grace"`
	// DeleteAfter is how long the old key stays inactive before it is deleted.
	DeleteAfter time.Duration `yaml:"delete_after"`
	// Recheck is how long a rotation held by a still-used old key waits to look again.
	Recheck time.Duration `yaml:"recheck"`
}

func (c RotationConfig) withDefaults() RotationConfig {
	if c.SecretName == "" {
		c.SecretName = DefaultRotationSecretName
	}
	if c.Region == "" {
		c.Region = DefaultRotationRegion
	}
	if c.Grace <= 0 {
		c.Grace = DefaultRotationGrace
	}
	if c.DeleteAfter <= 0 {
		c.DeleteAfter = DefaultRotationDeleteAfter
	}
	if c.Recheck <= 0 {
		c.Recheck = DefaultRotationRecheck
	}
	return c
}

// Validate refuses a template with an unknown placeholder and negative periods.
func (c RotationConfig) Validate() error {
	name := c.SecretName
	for _, ph := range []string{"{account}", "{user}", "{key}"} {
		name = strings.ReplaceAll(name, ph, "")
	}
	if strings.ContainsAny(name, "{}") {
		return fmt.Errorf("rotation.secret_name %q: the placeholders are {account}, {user} and {key}", c.SecretName)
	}
	for field, d := range map[string]time.Duration{"grace": c.Grace, "delete_after": c.DeleteAfter, "recheck": c.Recheck} {
		if d < 0 {
			return fmt.Errorf("rotation.%s: %s is negative", field, d)
		}
	}
	return nil
}

func (c RotationConfig) secretName(account, user, key string) string {
	return strings.NewReplacer("{account}", account, "{user}", user, "{key}", key).Replace(c.SecretName)
}
