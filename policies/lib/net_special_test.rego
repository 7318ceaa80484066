# Tests of warden.lib.net that call OPA's net.* builtins, whose names the usual import of
# data.warden.lib.net as net would hide.
package warden.lib.net_special_test

import data.warden.lib.net as wnet

test_special_ranges_are_merged if {
	# A range holds no public address exactly when one special range contains it, provided
	# no two special ranges could be merged into one.
	{r | some r in net.cidr_merge(wnet.special_ranges)} == wnet.special_ranges
}

test_special_ranges_are_valid if {
	every r in wnet.special_ranges {
		net.cidr_is_valid(r)
	}
}

test_default_gcp_trusted_ranges_are_valid if {
	every r in wnet.gcp_trusted_source_ranges {
		net.cidr_is_valid(r)
	}
}
