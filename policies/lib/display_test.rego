package warden.lib.display_test

import data.warden.lib.display

resource := {
	"uid": "arn:aws:iam::111111111111:user/alice",
	"type": "aws.iam.user",
	"name": "alice",
	"account": "111111111111",
	"attributes": {"user_name": "alice", "empty": "", "count": 3},
}

test_name_falls_back_to_the_uid if {
	display.name == "alice" with input as {"resource": resource}
	every r in [
		object.remove(resource, ["name"]),
		object.union(resource, {"name": ""}),
		object.union(resource, {"name": null}),
		object.union(resource, {"name": 42}),
	] {
		display.name == "arn:aws:iam::111111111111:user/alice" with input as {"resource": r}
	}
	display.name == "(resource without uid)" with input as {"resource": {"type": "x"}}
}

test_account_falls_back_to_the_uid if {
	display.account == "111111111111" with input as {"resource": resource}
	display.account == "arn:aws:iam::111111111111:user/alice" with input as {"resource": object.remove(resource, ["account"])}
}

test_attribute_falls_back_when_missing_empty_or_not_text if {
	display.attribute("user_name", "?") == "alice" with input as {"resource": resource}
	display.attribute("missing", "?") == "?" with input as {"resource": resource}
	display.attribute("empty", "?") == "?" with input as {"resource": resource}
	display.attribute("count", "?") == "?" with input as {"resource": resource}
	display.attribute("user_name", "?") == "?" with input as {"resource": object.remove(resource, ["attributes"])}
}

test_field_and_resource_name if {
	display.field({"id": "k"}, "id", "?") == "k"
	display.field({}, "id", "?") == "?"
	display.field("not an object", "id", "?") == "?"
	display.resource_name(resource) == "alice"
	display.resource_name(object.remove(resource, ["name"])) == "arn:aws:iam::111111111111:user/alice"
	display.resource_name({}) == "(resource without uid)"
}
