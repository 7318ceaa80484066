package warden.lib.config_test

import data.warden.lib.config

test_setting_default if {
	config.setting("x_days", 90) == 90
}

test_setting_configured if {
	config.setting("x_days", 90) == 30 with data.warden.config as {"x_days": 30}
}

test_setting_false_is_kept if {
	config.setting("flag", true) == false with data.warden.config as {"flag": false}
}
