// Package servecmd is the command that runs the reference server: `apiconform
// serve`, and the whole of the apiconform-refserver binary. One definition of
// its flags and of its start and stop, so the two cannot drift apart.
//
// apiconform-refserver exists because start-up is part of what the reference
// server promises: the apiconform binary links the suites, the clients they
// drive and the report renderers, whose package initialisation takes about
// 45 ms of a start on the 2-core VM before main runs; a binary that links
// only the server skips it.
package servecmd

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/apiconform/apiconform/refserver"
	"github.com/apiconform/apiconform/refserver/auth"
	"github.com/apiconform/apiconform/refserver/faults"
	"github.com/apiconform/apiconform/refserver/servingproc"
)

// ListeningPrefix starts the line the command prints once it serves,
// followed by the server's URL; scripts and tests read the URL from it.
const ListeningPrefix = refserver.ListeningPrefix

// New returns the command; use is its usage line ("serve", or the binary's
// name) and logName prefixes what the server logs. Every error it returns
// is a usage error: bad flags, unreadable files, an address it cannot
// listen on, or a data file it refuses.
func New(use, logName string) *cobra.Command {
	var (
		cfg            refserver.Config
		tokenFile      string
		rulesFile      string
		kubeconfigFile string
		noTLS          bool
		deviations     string
	)
	cmd := &cobra.Command{
		Use:   use,
		Short: "Run the reference server (the Kubernetes API machinery as documented)",
		Long: `Run the apiconform reference server: namespaces, configmaps, secrets and
CustomResourceDefinitions with watch, paging and resourceVersion semantics.

It serves HTTPS with a generated self-signed certificate on --addr, and plain
HTTP on --insecure-addr when given. Without --token-auth-file it is open to
every client on its address.`,
		Example: fmt.Sprintf(`  %[1]s --write-kubeconfig /tmp/ref.kubeconfig
  %[1]s --insecure-addr 127.0.0.1:8080 --data-dir /tmp/refdata`, logName),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if noTLS {
				cfg.Addr = ""
			}
			if tokenFile != "" {
				toks, err := auth.LoadTokenFile(tokenFile)
				if err != nil {
					return fmt.Errorf("--token-auth-file: %w", err)
				}
				cfg.Tokens = toks
			}
			if rulesFile != "" {
				rules, err := auth.LoadRules(rulesFile)
				if err != nil {
					return fmt.Errorf("--authorization-rules: %w", err)
				}
				cfg.Rules = rules
			}
			if cfg.Tokens != nil && kubeconfigFile != "" {
				// The kubeconfig needs a token that works: add an admin one.
				cfg.AdminToken = refserver.NewToken()
			}
			set, err := faults.ParseList(deviations)
			if err != nil {
				return fmt.Errorf("--simulate-deviation: %w", err)
			}
			cfg.Faults = set
			cfg.Logf = func(format string, args ...any) {
				fmt.Fprintf(cmd.ErrOrStderr(), logName+": "+format+"\n", args...)
			}
			srv, err := refserver.New(cfg)
			if err != nil {
				return err
			}
			// This process is a server (see package servingproc).
			settings := servingproc.Start()
			defer settings.Stop()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := srv.Start(ctx); err != nil {
				_ = srv.Close()
				return err
			}
			if kubeconfigFile != "" {
				if err := os.WriteFile(kubeconfigFile, srv.Kubeconfig(), 0o600); err != nil {
					_ = srv.Close()
					return fmt.Errorf("--write-kubeconfig: %w", err)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s%s\n", ListeningPrefix, srv.URL())
			if names := set.Names(); len(names) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "!!! SIMULATING DEVIATIONS: %s — this server is deliberately NOT conformant (also listed in /version)\n",
					strings.Join(names, ", "))
			}
			if u := srv.InsecureURL(); u != "" && u != srv.URL() {
				fmt.Fprintf(cmd.OutOrStdout(), "plain HTTP on %s\n", u)
			}
			if kubeconfigFile != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "kubeconfig written to %s\n", kubeconfigFile)
			}
			settings.Serving()
			// The data file's check ends after the server is ready; a file
			// it refuses ends the server as a file refused at open does.
			if err := srv.WaitStoreChecked(ctx); err != nil && ctx.Err() == nil {
				_ = srv.Close()
				return err
			}
			<-ctx.Done()
			return srv.Close()
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Addr, "addr", "127.0.0.1:6443", "HTTPS listen address (self-signed certificate for 127.0.0.1, ::1, localhost)")
	f.BoolVar(&noTLS, "no-tls", false, "do not serve HTTPS (use with --insecure-addr)")
	f.StringVar(&cfg.InsecureAddr, "insecure-addr", "", "also serve plain HTTP on this address")
	f.BoolVar(&cfg.AllowNonLoopback, "allow-non-loopback", false, "allow listening on non-loopback addresses")
	f.StringVar(&cfg.DataDir, "data-dir", "", "keep objects in a bbolt file in this directory (survives restarts); default in memory")
	f.BoolVar(&cfg.FreshStore, "fresh-store", false, "with --data-dir: start an empty store when the data file is empty (0 bytes) instead of refusing it")
	f.DurationVar(&cfg.HistoryWindow, "history-window", 5*time.Minute, "how long past revisions stay readable")
	f.IntVar(&cfg.HistoryMaxRevisions, "history-max-revisions", 0, "keep the changes of at most this many revisions; the state before the oldest of them stays readable too (0 = no limit)")
	f.StringVar(&tokenFile, "token-auth-file", "", "kube-apiserver style token CSV: token,user,uid,\"group1,group2\"")
	f.StringVar(&rulesFile, "authorization-rules", "", "YAML rules: {rules: [{users|groups, verbs, resources, namespaces, resourceNames | nonResourceURLs}]}; \"*\" in users/groups = authenticated users")
	f.BoolVar(&cfg.EnableAdminEndpoints, "enable-admin-endpoints", false, "serve /apiconform/admin (compaction) to system:masters users (to everyone on an open server)")
	f.DurationVar(&cfg.BookmarkInterval, "bookmark-interval", time.Minute, "how often watches with allowWatchBookmarks get a BOOKMARK")
	f.DurationVar(&cfg.RevisionWait, "revision-wait", 3*time.Second, "how long a read waits for a future resourceVersion before 504")
	f.DurationVar(&cfg.EventTTL, "event-ttl", time.Hour, "how long an event is kept after its last write, as kube-apiserver's --event-ttl (0 = until deleted)")
	f.IntVar(&cfg.MaxRequestsInFlight, "max-requests-inflight", 400, "concurrent short requests, and concurrent watch initialisations, before 429 TooManyRequests (0 = no limit; only system:masters and health probes exempt)")
	f.StringVar(&deviations, "simulate-deviation", "", "comma-separated deviations to simulate, to see a failing report (off by default; names: "+strings.Join(faults.Names(), ", ")+")")
	f.StringVar(&kubeconfigFile, "write-kubeconfig", "", "write a kubeconfig for clients (server, CA data, token) to this file")
	return cmd
}
