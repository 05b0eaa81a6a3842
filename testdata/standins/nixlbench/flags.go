package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// flagKind is a gflags type.
type flagKind int

const (
	kString flagKind = iota
	kInt
	kBool
)

type flagDef struct {
	kind flagKind
	def  string
}

// flagDefs are the nixlbench flags the stand-in knows, with their defaults.
var flagDefs = map[string]flagDef{
	"runtime_type": {kString, "ETCD"}, "etcd_endpoints": {kString, ""}, "benchmark_group": {kString, "default"},
	"worker_type": {kString, "nixl"}, "backend": {kString, "UCX"},
	"initiator_seg_type": {kString, "DRAM"}, "target_seg_type": {kString, "DRAM"},
	"scheme": {kString, "pairwise"}, "mode": {kString, "SG"}, "op_type": {kString, "WRITE"},
	"check_consistency": {kBool, "false"}, "total_buffer_size": {kInt, "8589934592"},
	"start_block_size": {kInt, "4096"}, "max_block_size": {kInt, "67108864"},
	"start_batch_size": {kInt, "1"}, "max_batch_size": {kInt, "1"},
	"num_iter": {kInt, "1000"}, "warmup_iter": {kInt, "100"}, "large_blk_iter_ftr": {kInt, "16"},
	"num_threads": {kInt, "1"}, "num_initiator_dev": {kInt, "1"}, "num_target_dev": {kInt, "1"},
	"device_list": {kString, "all"}, "enable_pt": {kBool, "false"}, "progress_threads": {kInt, "0"},
	"recreate_xfer": {kBool, "false"}, "reregister_mem": {kBool, "false"}, "prepared_xfer": {kBool, "false"},
	"pipeline_depth": {kInt, "1"}, "enable_vmm": {kBool, "false"}, "use_hugepages": {kBool, "false"},
	"asio_address": {kString, "127.0.0.1"}, "asio_port": {kInt, "12345"}, "use_device_api": {kBool, "false"},
	"config_file": {kString, ""}, "filepath": {kString, ""}, "num_files": {kInt, "1"},
	"storage_enable_direct": {kBool, "false"}, "posix_api_type": {kString, "AIO"},
}

// flags holds parsed values by canonical (underscore) name.
type flags map[string]string

func (f flags) str(n string) string { return f[n] }

func (f flags) num(n string) int64 {
	v, _ := strconv.ParseInt(f[n], 10, 64)
	return v
}

func (f flags) on(n string) bool { return f[n] == "true" }

// usageExit is a parse outcome that ends the program with a message.
type usageExit struct {
	msg  string
	code int
}

// Error is the message printed before exiting.
func (u *usageExit) Error() string { return u.msg }

// parseFlags implements gflags syntax: --name=value, --name value,
// -name value, dashes for underscores, bool flags never consume the next
// word, --noname, unknown flags are errors, flagfile/fromenv rejected.
func parseFlags(args []string) (flags, error) {
	f := flags{}
	for n, d := range flagDefs {
		f[n] = d.def
	}
	for _, a := range args {
		for _, bad := range []string{"flagfile", "fromenv", "tryfromenv"} {
			if strings.HasPrefix(a, "-") && strings.Contains(a, bad) {
				return nil, &usageExit{fmt.Sprintf("--%s is disabled for nixlbench. Use --config_file instead.", bad), 1}
			}
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue // stray positional words are ignored
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		name = strings.ReplaceAll(name, "-", "_")
		if name == "help" || name == "helpfull" {
			return nil, &usageExit{helpText(), 1}
		}
		def, ok := flagDefs[name]
		if !ok {
			if d, ok2 := flagDefs[strings.TrimPrefix(name, "no")]; ok2 && d.kind == kBool && strings.HasPrefix(name, "no") && !hasVal {
				f[strings.TrimPrefix(name, "no")] = "false"
				continue
			}
			return nil, &usageExit{fmt.Sprintf("ERROR: unknown command line flag '%s'", name), 1}
		}
		if def.kind == kBool {
			if !hasVal {
				val = "true"
			}
			b, ok := parseBool(val)
			if !ok {
				return nil, &usageExit{fmt.Sprintf("ERROR: illegal value '%s' specified for bool flag '%s'", val, name), 1}
			}
			f[name] = strconv.FormatBool(b)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, &usageExit{fmt.Sprintf("ERROR: flag '%s' is missing its argument", a), 1}
			}
			i++
			val = args[i]
		}
		if def.kind == kInt {
			if _, err := strconv.ParseInt(val, 10, 64); err != nil {
				return nil, &usageExit{fmt.Sprintf("ERROR: illegal value '%s' specified for int64 flag '%s'", val, name), 1}
			}
		}
		f[name] = val
	}
	return f, nil
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "t", "yes", "y", "1":
		return true, true
	case "false", "f", "no", "n", "0":
		return false, true
	}
	return false, false
}

func helpText() string {
	names := make([]string, 0, len(flagDefs))
	for n := range flagDefs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("nixlbench: NIXL benchmark (rdmabench stand-in)\n\n  Flags:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "    -%s (default: \"%s\")\n", n, flagDefs[n].def)
	}
	return b.String()
}
