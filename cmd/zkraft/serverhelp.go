package main

import (
	"reflect"
	"strings"

	"github.com/urfave/cli/v2"
)

// serverFlagCategories groups `zkraft server --help` by topic (urfave/cli
// prints each category under its name, in name order). A flag not named
// here takes the category of the first prefix in serverFlagPrefixes it
// starts with; TestServerHelpGrouped requires every flag to have one.
// --config stays at the top with --help.
var serverFlagCategories = map[string]string{
	"client-addr": catNetwork, "secure-client-addr": catNetwork, "port-unification": catNetwork,

	"data-dir": catStorage, "data-log-dir": catStorage, "no-sync": catStorage,

	"id": catEnsemble, "peers": catEnsemble, "join": catEnsemble, "reconfig-enabled": catEnsemble,
	"read-only-mode": catEnsemble, "linearizable-reads": catEnsemble,

	"tick-time": catSessions, "min-session-timeout": catSessions, "max-session-timeout": catSessions,

	"super-digest": catSecurity, "skip-acl": catSecurity, "jaas-config": catSecurity,

	"max-client-cnxns": catLimits, "global-outstanding-limit": catLimits, "jute-max-buffer": catLimits,
	"enforce-quota": catLimits,

	"extended-types": catZnodes, "container-check-interval": catZnodes,

	"audit": catObservability, "4lw-whitelist": catObservability, "admin-addr": catObservability,
	"pprof-addr": catObservability,
}

// serverFlagPrefixes categorize families of flags, new members included.
var serverFlagPrefixes = []struct{ prefix, category string }{
	{"tls-", catSecurity},
	{"ssl-", catSecurity},
	{"metrics-", catObservability},
	{"log-", catObservability},
	{"admin-", catObservability},
	{"console", catObservability}, // the web console beside the AdminServer
	{"snap", catStorage},
}

// The server's flag categories.
const (
	catNetwork       = "Network"
	catStorage       = "Storage"
	catEnsemble      = "Ensemble"
	catSessions      = "Sessions"
	catSecurity      = "Security"
	catLimits        = "Limits"
	catZnodes        = "Znodes"
	catObservability = "Observability"
)

// serverFlagCategory is the category of the server flag called name, ""
// for none.
func serverFlagCategory(name string) string {
	if c, ok := serverFlagCategories[name]; ok {
		return c
	}
	for _, p := range serverFlagPrefixes {
		if strings.HasPrefix(name, p.prefix) {
			return p.category
		}
	}
	return ""
}

// categorized sets each flag's Category from serverFlagCategory and
// returns flags. Every urfave flag type has a Category string field; it
// is set through reflection so that any flag type added later works too.
func categorized(flags []cli.Flag) []cli.Flag {
	for _, f := range flags {
		cat := serverFlagCategory(f.Names()[0])
		v := reflect.ValueOf(f)
		if cat == "" || v.Kind() != reflect.Pointer {
			continue
		}
		if field := v.Elem().FieldByName("Category"); field.IsValid() && field.CanSet() && field.Kind() == reflect.String {
			field.SetString(cat)
		}
	}
	return flags
}
