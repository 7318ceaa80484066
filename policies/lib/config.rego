# METADATA
# title: Settings
# description: Policy settings from data.warden.config, each with its default in the calling policy.
package warden.lib.config

# setting(name, default_value) is data.warden.config[name], or default_value when unset.
#
# Performance: a call costs a function evaluation (and, for a default that is a list, the
# hashing of that list for OPA's cache). Read a setting in a rule without arguments, which
# OPA evaluates once per query and only when a rule needs it. The built-in pack spells the
# same lookup out, which is cheaper still and decides the same:
#
#	max_days := n if {
#		n := data.warden.config.access_key_max_age_days
#	} else := 90
setting(name, default_value) := value if {
	value := data.warden.config[name]
} else := default_value
