# METADATA
# title: Settings
# description: Policy settings from data.warden.config, each with its default in the calling policy.
package warden.lib.config

# setting(name, default_value) is data.warden.config[name], or default_value when unset.
setting(name, default_value) := value if {
	value := data.warden.config[name]
} else := default_value
