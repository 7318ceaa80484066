package main

import "github.com/warden-sec/warden/audit"

// actorEnv names the actor of warden's commands when set (audit.ActorEnv).
const actorEnv = audit.ActorEnv

// actor is who runs this command, as every event they cause records it: $WARDEN_ACTOR,
// or else the OS user name (audit.CurrentActor).
func actor() (string, error) { return audit.CurrentActor() }
