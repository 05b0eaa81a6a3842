package scenarios

import (
	"reflect"
	"testing"

	"github.com/rdmabench/rdmabench/tool"
)

// kindTypes is the Args field type each argument kind is held in.
var kindTypes = map[tool.Kind][]reflect.Type{
	tool.KindString:   {reflect.TypeFor[string]()},
	tool.KindInt:      {reflect.TypeFor[int](), reflect.TypeFor[*int]()},
	tool.KindBool:     {reflect.TypeFor[bool]()},
	tool.KindSize:     {reflect.TypeFor[Size]()},
	tool.KindSizes:    {reflect.TypeFor[[]Size]()},
	tool.KindDuration: {reflect.TypeFor[Duration]()},
	tool.KindStrings:  {reflect.TypeFor[[]string]()},
}

// TestSchemaKeysAreArgs: every key of every tool's argument schema is a
// field of Args of its kind, so that defaults and checks reach it.
func TestSchemaKeysAreArgs(t *testing.T) {
	var a Args
	for _, spec := range tool.All() {
		for _, arg := range spec.Args {
			f := argField(&a, arg.Key)
			switch {
			case !f.IsValid():
				t.Errorf("%s: args.%s is no field of Args", spec.Name, arg.Key)
			case !contains(kindTypes[arg.Kind], f.Type()):
				t.Errorf("%s: args.%s is a %s, not of kind %d", spec.Name, arg.Key, f.Type(), arg.Kind)
			case arg.Default != nil && arg.Kind != tool.KindString:
				t.Errorf("%s: args.%s has a default but is not a string", spec.Name, arg.Key)
			case len(arg.OneOf) > 0 && arg.What == "":
				t.Errorf("%s: args.%s lists its values but names them not (What)", spec.Name, arg.Key)
			}
		}
	}
}
