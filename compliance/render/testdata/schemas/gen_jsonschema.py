#!/usr/bin/env python3
"""Generate a JSON Schema (draft-07) for one OCSF event class from a *compiled* OCSF schema.

The compiled schema is the single JSON document that ocsf-schema-compiler (or the OCSF
server's /export/schema) produces from a checkout of ocsf/ocsf-schema. The encoding
follows the OCSF server's own generator, lib/schema/json_schema.ex (ocsf/ocsf-server,
Apache-2.0): draft-07, "additionalProperties": false everywhere, "required" from
requirement == "required", enums of integer_t / string_t attributes as "enum" (or
"const" when there is one value), arrays as {"type": "array", "items": ...}, every
referenced object under "$defs", the constraints just_one / at_least_one as oneOf / anyOf,
and an object with no attributes open ("additionalProperties": true).

Profiles: attributes tagged with profiles are kept only when one of their profiles is in
--profile (repeatable); untagged attributes are always kept. With no --profile, every
profile attribute is dropped (the class's base shape).

Written for warden (issue 11); kept here to regenerate compliance_finding-1.8.0.schema.json.

usage: gen_jsonschema.py COMPILED.json CLASS [--profile P ...] > out.schema.json
"""
import argparse
import json
import sys


def base_type(types, t):
    # Follow a dictionary type down to its primitive (timestamp_t -> long_t, ...).
    seen = set()
    while t in types and types[t].get("type") and t not in seen:
        seen.add(t)
        t = types[t]["type"]
    return {
        "string_t": "string",
        "integer_t": "integer",
        "long_t": "integer",
        "float_t": "number",
        "boolean_t": "boolean",
    }.get(t)


def keep(attr, profiles):
    ps = attr.get("profiles")
    return not ps or any(p in profiles for p in ps)


def encode_attr(attr, types, wanted):
    s = {"title": attr.get("caption")}
    t = attr.get("type")
    if t == "object_t":
        s["$ref"] = "#/$defs/" + attr["object_type"].replace("/", "_")
        wanted.add(attr["object_type"])
    elif t == "json_t":
        pass
    elif t in ("integer_t", "string_t"):
        s["type"] = "integer" if t == "integer_t" else "string"
        enum = attr.get("enum")
        if enum:
            vals = sorted(int(k) if t == "integer_t" else k for k in enum)
            if len(vals) == 1:
                s["const"] = vals[0]
            else:
                s["enum"] = vals
    else:
        bt = base_type(types, t)
        s["type"] = bt if bt else t
    if attr.get("is_array"):
        item = {}
        if "$ref" in s:
            item["$ref"] = s.pop("$ref")
        else:
            item["type"] = s.pop("type", None)
            if "enum" in s:
                item["enum"] = s.pop("enum")
            if "const" in s:
                item["const"] = s.pop("const")
            item = {k: v for k, v in item.items() if v is not None}
        s["type"] = "array"
        s["items"] = item
    return s


def encode_item(item, types, profiles, wanted):
    attrs = {k: a for k, a in item.get("attributes", {}).items() if keep(a, profiles)}
    cons = item.get("constraints", {}) or {}
    just_one = [a for a in cons.get("just_one", []) if a in attrs]
    at_least_one = [a for a in cons.get("at_least_one", []) if a in attrs]
    props, required = {}, []
    for name in sorted(attrs):
        a = attrs[name]
        if name not in just_one and name not in at_least_one and a.get("requirement") == "required":
            required.append(name)
        props[name] = encode_attr(a, types, wanted)
    out = {"title": item.get("caption"), "type": "object", "properties": props,
           "additionalProperties": not props}
    if required:
        out["required"] = sorted(required)
    if just_one:
        out["oneOf"] = [{"required": [n], "not": {"required": [o for o in just_one if o != n]}}
                        for n in sorted(just_one)]
    if at_least_one:
        out["anyOf"] = [{"required": [n]} for n in sorted(at_least_one)]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiled")
    ap.add_argument("cls")
    ap.add_argument("--profile", action="append", default=[])
    args = ap.parse_args()
    schema = json.load(open(args.compiled))
    types = schema["dictionary"]["types"]["attributes"]
    cls = schema["classes"][args.cls]
    version = schema["version"]
    wanted = set()
    root = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "https://schema.ocsf.io/schema/%s/classes/%s%s" % (
            version, args.cls, ("?profiles=" + ",".join(sorted(args.profile))) if args.profile else ""),
        "$comment": "Generated from OCSF %s (compiled), class %s (%d), profiles %s, by gen_jsonschema.py "
                    "following ocsf-server lib/schema/json_schema.ex" % (
                        version, args.cls, cls["uid"], sorted(args.profile) or "none"),
    }
    root.update(encode_item(cls, types, args.profile, wanted))
    defs, done = {}, set()
    while wanted - done:
        name = sorted(wanted - done)[0]
        done.add(name)
        defs[name.replace("/", "_")] = encode_item(schema["objects"][name], types, args.profile, wanted)
    root["$defs"] = dict(sorted(defs.items()))
    json.dump(root, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
