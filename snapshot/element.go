package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/valyala/fastjson"
)

// resourceFields are the fields a resource object may have.
var resourceFields = []string{"uid", "type", "name", "account", "region", "scope", "tags", "attributes"}

// Parser checks resource elements and parses them into a JSON tree. A Parser is not safe
// for concurrent use: give each worker its own.
type Parser struct {
	name string
	p    fastjson.Parser
	c    checker
}

// NewParser returns a Parser whose errors name the snapshot file name.
func NewParser(name string) *Parser { return &Parser{name: name} }

// Parse checks an element against the resource model and returns its identity fields
// (Tags and Attributes are left nil) and the parsed object. The value is valid until the
// next call to Parse.
func (p *Parser) Parse(el Element) (Resource, *fastjson.Value, error) {
	// fastjson's parser is lenient (NaN, Inf, "+5", bad escapes): what reaches the
	// policies must be the JSON every other reader of the snapshot sees.
	if fastjson.ValidateBytes(el.Data) != nil {
		return Resource{}, nil, p.syntaxErr(el)
	}
	v, err := p.p.ParseBytes(el.Data)
	if err != nil {
		return Resource{}, nil, p.syntaxErr(el)
	}
	obj, err := v.Object()
	if err != nil {
		return Resource{}, nil, p.errAt(el, "", "a resource must be an object")
	}
	if dup := p.c.duplicateKey(obj); dup != "" {
		return Resource{}, nil, p.schemaErrAt(el, &schemaErr{path: []string{dup}, msg: "appears twice in one resource", dup: true})
	}
	var res Resource
	var ferr error
	var attrs *fastjson.Value
	obj.Visit(func(k []byte, fv *fastjson.Value) {
		if ferr != nil {
			return
		}
		key := string(k)
		switch key {
		case "uid", "type", "name", "account", "region", "scope":
			if fv.Type() != fastjson.TypeString {
				ferr = p.errAt(el, key, fmt.Sprintf("must be a string, found %s", fv.Type()))
				return
			}
			s := string(fv.GetStringBytes())
			switch key {
			case "uid":
				res.UID = s
			case "type":
				res.Type = s
			case "name":
				res.Name = s
			case "account":
				res.Account = s
			case "region":
				res.Region = s
			case "scope":
				res.Scope = s
			}
		case "tags":
			if fv.Type() == fastjson.TypeNull {
				return
			}
			to, err := fv.Object()
			if err != nil {
				ferr = p.errAt(el, key, "must be an object of strings")
				return
			}
			if dup := p.c.duplicateKey(to); dup != "" {
				ferr = p.schemaErrAt(el, &schemaErr{path: []string{dup, "tags"}, msg: "appears twice in one object", dup: true})
				return
			}
			to.Visit(func(tk []byte, tv *fastjson.Value) {
				if ferr == nil && tv.Type() != fastjson.TypeString {
					ferr = p.errAt(el, key, fmt.Sprintf("tag %q must be a string, found %s", tk, tv.Type()))
				}
			})
		case "attributes":
			if t := fv.Type(); t != fastjson.TypeObject && t != fastjson.TypeNull {
				ferr = p.errAt(el, key, fmt.Sprintf("must be an object, found %s", t))
			}
			attrs = fv
		default:
			msg := "unknown field"
			if s := Suggest(key, resourceFields); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			ferr = p.errAt(el, key, msg)
		}
	})
	if ferr != nil {
		return Resource{}, nil, ferr
	}
	switch {
	case res.UID == "":
		return Resource{}, nil, p.errAt(el, "uid", "is required")
	case res.Type == "":
		return Resource{}, nil, p.errAt(el, "type", "is required")
	case !KnownType(res.Type):
		msg := fmt.Sprintf("unknown resource type %q", res.Type)
		if s := SuggestType(res.Type); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return Resource{}, nil, p.errAt(el, "type", msg)
	}
	if serr := p.c.checkAttributes(res.Type, attrs); serr != nil {
		return Resource{}, nil, p.schemaErrAt(el, serr)
	}
	if res.Scope == "" {
		res.Scope = DefaultScope(res.Type, res.Account, res.Region)
	}
	return res, v, nil
}

// Decode checks an element and decodes it whole, attributes included.
func (p *Parser) Decode(el Element) (Resource, error) {
	res, _, err := p.Parse(el)
	if err != nil {
		return Resource{}, err
	}
	scope := res.Scope
	if err := json.Unmarshal(el.Data, &res); err != nil {
		return Resource{}, p.errAt(el, "", jsonMsg(err))
	}
	res.Scope = scope
	return res, nil
}

func (p *Parser) errAt(el Element, field, msg string) error {
	path := fmt.Sprintf("resources[%d]", el.Index)
	line := el.Line
	if field != "" {
		path += "." + field
		if off := keyOffset(el.Data, field); off >= 0 {
			line += bytes.Count(el.Data[:off], []byte{'\n'})
		}
	}
	return &Error{File: p.name, Line: line, Offset: el.Offset, Field: path, Msg: msg}
}

// schemaErrAt places a schema violation on the line of the field it names.
func (p *Parser) schemaErrAt(el Element, e *schemaErr) error {
	path := e.outward()
	field := fmt.Sprintf("resources[%d]", el.Index)
	if ps := pathString(path); ps != "" {
		if strings.HasPrefix(ps, "[") {
			field += ps
		} else {
			field += "." + ps
		}
	}
	line := el.Line
	if len(path) > 0 {
		if off := locate(el.Data, path, e.dup); off > 0 {
			line += bytes.Count(el.Data[:min(off, len(el.Data))], []byte{'\n'})
		}
	}
	return &Error{File: p.name, Line: line, Offset: el.Offset, Field: field, Msg: e.msg}
}

// syntaxErr locates a JSON syntax error inside an element with encoding/json, whose
// errors carry an offset.
func (p *Parser) syntaxErr(el Element) error {
	var v any
	err := json.Unmarshal(el.Data, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := min(int(se.Offset), len(el.Data))
		return &Error{File: p.name, Line: el.Line + bytes.Count(el.Data[:off], []byte{'\n'}),
			Offset: el.Offset + int64(off), Field: fmt.Sprintf("resources[%d]", el.Index), Msg: "invalid JSON: " + se.Error()}
	}
	return &Error{File: p.name, Line: el.Line, Offset: el.Offset, Field: fmt.Sprintf("resources[%d]", el.Index), Msg: "invalid JSON"}
}

// keyOffset finds the offset of a top-level key in a JSON object, or -1.
func keyOffset(data []byte, key string) int {
	depth, inString, start := 0, false, 0
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
				if depth == 1 && string(data[start+1:i]) == key {
					j := i + 1
					for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r') {
						j++
					}
					if j < len(data) && data[j] == ':' {
						return start
					}
				}
			}
			continue
		}
		switch c {
		case '"':
			inString, start = true, i
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
	}
	return -1
}
