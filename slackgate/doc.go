// Package slackgate is the Slack channel of warden's approval gates: each approval
// request is posted to a channel as a Block Kit message with Approve and Deny buttons,
// the clicks come back to an HTTP endpoint that decides through the gate, and the
// message follows the request and its fix to the end (approved by whom and how many
// more are needed, denied with the reason, expired, voided, applied and verified,
// failed, rolled back).
//
// # Wiring (warden serve)
//
//	cfg := file.Slack                                   // the slack: section (Config)
//	secrets, err := slackgate.LoadSecrets(cfg, os.Getenv) // environment, else the files
//	n, err := slackgate.NewNotifier(slackgate.Options{
//		Config: cfg, Identities: file.Identities, Secrets: secrets,
//		Store: st, Gate: gate, Actions: machine,
//		OnDecision: func(string) { loop.Wake() },     // the loop applies what reached its quorum
//	})
//	h := slackgate.NewHandler(n)
//	routes["POST /slack/interactions"] = h            // served by serve.Server
//	loop = daemon.NewLoop(daemon.LoopOptions{Machine: machine,
//		Syncers: []daemon.Syncer{n}})                 // Notifier.Sync after every pass
//	...                                               // on shutdown, after the listener: h.Wait()
//
// Notifier.Sync posts what is new and updates what changed; it is idempotent and cheap,
// so serve may call it every second. The messages posted are kept in the store (table
// slack_messages, migration 0007), so that a restart neither posts a request twice nor
// forgets to update its message. After a 429 nothing is sent until Slack's Retry-After
// has passed.
//
// # Who decides from Slack
//
// A Slack user decides as the identity identities: links them to (alice: {slack:
// U0AAAAAAA}), else as "slack:<USERID>": so the requester of a fix never approves it
// from Slack either, and one person's approvals count once across channels. A user in
// slack.approvers, or a member of slack.approver_group (usergroups.users.list, cached
// for a minute), is vouched for by the channel (gates.Gate.DecideAuthorized); any other
// user decides through gates.Gate.Decide, which accepts them only if their identity is
// in gates.approvers. Every other rule is the gate's: never the requester, one decision
// per approver, nothing on an expired, voided or decided request, the quorum.
//
// # The interaction endpoint
//
// Handler verifies Slack's v0 signature on the raw body before parsing anything, with
// slack-go's SecretsVerifier (HMAC-SHA256 over "v0:timestamp:body", constant-time
// compare, the timestamp within 5 minutes); failures are 401 and counted
// (Handler.Stats). It acknowledges at once and does the work on its own goroutine
// (Options.WorkTimeout); a refused click is told why by an ephemeral message
// (chat.postEphemeral). Deny's reason is typed into an input block of the message
// itself and arrives with the click, in the payload's state: no modal, no extra round
// trip, and a deny without a reason is refused with a message saying so.
//
// # Secrets
//
// The bot token and the signing secret come from WARDEN_SLACK_BOT_TOKEN and
// WARDEN_SLACK_SIGNING_SECRET, else from the files slack.bot_token_file and
// slack.signing_secret_file name (readable by their owner only); never from flags.
// Secret values print and log as "[redacted]", and no error quotes them.
package slackgate
