package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/mod/sumdb/note"

	"github.com/warden-sec/warden/audit"
)

// auditKeyEnv holds the checkpoint signing key itself (PRIVATE+KEY+…), for hosts that
// keep secrets in the environment rather than in files; it wins over any key file.
const auditKeyEnv = audit.KeyEnv

// auditFlags are the flags every audit command shares. The commands open the existing
// database (af.db.open(ctx, false)): the audit log is written by the commands that change
// state, so a missing database is a wrong --db, not an empty log.
type auditFlags struct {
	db      dbFlags
	keyFile string
}

func (af *auditFlags) register(cmd *cobra.Command) {
	af.db.register(cmd, dbHelp, dbConfigHelp)
	cmd.Flags().StringVar(&af.keyFile, "audit-key", "", "checkpoint signing key file, created (mode 0600) if missing; $"+auditKeyEnv+", the key text itself, wins over it (default $XDG_STATE_HOME/warden/audit.key)")
}

// key returns the signing key (audit.SigningKey): with create false, a missing file is
// no key (nil, nil).
func (af *auditFlags) key(create bool) (note.Signer, note.Verifier, error) {
	s, v, err := audit.SigningKey(os.Getenv, af.keyFile, create)
	if err != nil {
		return nil, nil, usageErr(err)
	}
	return s, v, nil
}

func (a *app) auditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Verify, checkpoint and export the tamper-evident audit log",
		Long: `Every event warden records — scans, findings, plans, approvals, actions, pauses — is an
entry of an append-only Merkle log (RFC 6962), written in the same transaction as the
change it records. Checkpoints sign the log's size and root hash with an ed25519 key
(C2SP tlog-checkpoint); keep copies of them elsewhere: a checkpoint proves any later
edit, deletion, reordering or truncation of what it covers.

The signing key is $` + auditKeyEnv + ` (the key text), else the file --audit-key, else
$XDG_STATE_HOME/warden/audit.key, created with mode 0600 on first use. It is never
printed; 'warden audit key' prints the verifier key that checks its signatures.`,
	}
	cmd.AddCommand(a.auditVerifyCmd(), a.auditCheckpointCmd(), a.auditExportCmd(), a.auditKeyCmd())
	return cmd
}

func (a *app) auditVerifyCmd() *cobra.Command {
	var af auditFlags
	var checkpoints []string
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Recompute the audit log's tree and check every checkpoint",
		Long: `Recompute every entry's leaf hash and the tree over them, check them against the stored
hashes, check every stored checkpoint's signature and that the log still extends it, and
the same for the checkpoints given with --checkpoint (copies kept elsewhere).

Exit codes: 0 the log is intact (a summary line says how large it is and its root
hash); 1 it was tampered with: the first bad entry is named, and what is wrong with it;
2 the log could not be read.`,
		Example: `  warden audit checkpoint > cp-monday.txt
  warden audit verify --checkpoint cp-monday.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			given, err := audit.ReadCheckpointFiles(checkpoints...)
			if err != nil {
				return usageErr(fmt.Errorf("--checkpoint: %w", err))
			}
			_, v, err := af.key(false)
			if err != nil {
				return err
			}
			_, st, err := af.db.open(ctx, false)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := audit.New(st, audit.Options{}).Verify(ctx, v, given...)
			if errors.Is(err, audit.ErrTampered) {
				// The first problem is the error; the others help to see how far it goes.
				for _, p := range rep.Problems[1:] {
					fmt.Fprintf(a.stderr, "warden: also: %s\n", p)
				}
				return &exitErr{code: exitFindings, err: err}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%d entries, %d checkpoints, root %s\n", rep.Entries, rep.Checkpoints+rep.Given, rep.Root)
			return nil
		},
	}
	af.register(cmd)
	cmd.Flags().StringArrayVar(&checkpoints, "checkpoint", nil, "a signed checkpoint file the log must still extend (repeatable)")
	return cmd
}

func (a *app) auditCheckpointCmd() *cobra.Command {
	var af auditFlags
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Sign a checkpoint of the audit log now and print it",
		Long: `Sign the audit log's current size and root hash, store the checkpoint in the log, and
print it (a C2SP tlog-checkpoint signed note). Keep a copy outside warden's database:
'warden audit verify --checkpoint FILE' then proves that no entry it covers changed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The database first: a wrong --db must not leave a new key behind.
			_, st, err := af.db.open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer st.Close()
			s, _, err := af.key(true)
			if err != nil {
				return err
			}
			cp, err := audit.New(st, audit.Options{Signer: s}).Checkpoint(cmd.Context())
			if err != nil {
				return err
			}
			_, err = a.stdout.Write(cp)
			return err
		},
	}
	af.register(cmd)
	return cmd
}

func (a *app) auditExportCmd() *cobra.Command {
	var af auditFlags
	var out, checkpoint string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write the audit log as JSON Lines with inclusion proofs",
		Long: `Write the audit log as JSON Lines: first the signed checkpoint, then one line per entry
with its canonical record, its leaf hash and its inclusion proof in the checkpoint's
tree. Anyone holding the verifier key ('warden audit key') can check it without warden's
database (audit.VerifyExport). Without --checkpoint, a checkpoint is signed now, so
that the export holds every entry.`,
		Example: `  warden audit export --out audit.jsonl
  warden audit key > audit.pub`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			var cp []byte
			if checkpoint != "" {
				cps, err := audit.ReadCheckpointFiles(checkpoint)
				if err != nil {
					return usageErr(fmt.Errorf("--checkpoint: %w", err))
				}
				cp = cps[0]
			}
			_, st, err := af.db.open(ctx, false)
			if err != nil {
				return err
			}
			defer st.Close()
			var signer note.Signer
			if cp == nil {
				if signer, _, err = af.key(true); err != nil {
					return err
				}
			}
			return audit.New(st, audit.Options{Signer: signer}).ExportTo(ctx, a.stdout, out, cp)
		},
	}
	af.register(cmd)
	cmd.Flags().StringVarP(&out, "out", "o", "", "write the export to this file instead of stdout")
	cmd.Flags().StringVar(&checkpoint, "checkpoint", "", "export against this signed checkpoint file instead of signing one now")
	return cmd
}

func (a *app) auditKeyCmd() *cobra.Command {
	var af auditFlags
	cmd := &cobra.Command{
		Use:   "key",
		Short: "Print the verifier key of the audit log's signing key",
		Long: `Print the verifier key (name+hash+key, golang.org/x/mod/sumdb/note) that checks the
audit log's checkpoint signatures. It holds no secret: give it to whoever checks an
export. The signing key itself is never printed; it is created on first use.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, v, err := af.key(true)
			if err != nil {
				return err
			}
			vkey, err := audit.VerifierKey(v)
			if err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, vkey)
			return nil
		},
	}
	// --db and --config are accepted for symmetry with the other audit commands; the key
	// does not depend on them.
	af.register(cmd)
	return cmd
}
