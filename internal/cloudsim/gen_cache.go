package cloudsim

import (
	"container/list"
	"reflect"
	"slices"
)

// genOrg is the simulator's side of a generated organisation (GeneratedAccounts): its
// accounts' cache and the drift epochs. s.mu guards it.
type genOrg struct {
	cfg        GeneratedAccounts // defaults filled in
	management string
	cache      *genCache[Account]
	epochs     []driftEpoch
}

func (s *Sim) newGenOrg(cfg GeneratedAccounts, management string) *genOrg {
	g := &genOrg{cfg: cfg.withDefaults(), management: management}
	g.cache = newGenCache(g.cfg.Cache, func(id string, epoch int) (*Account, error) {
		a, err := s.genAccount(&g.cfg, g.cfg.index(id), g.management)
		if err != nil {
			return nil, err
		}
		for k := 1; k <= epoch; k++ {
			g.drift(a, k)
		}
		return a, nil
	})
	g.cache.drift = g.drift
	g.cache.epochs = func() int { return len(g.epochs) }
	return g
}

// owns reports whether id is a generated account; a nil genOrg owns none.
func (g *genOrg) owns(id string) bool { return g != nil && g.cfg.index(id) >= 0 }

// lookupAccount finds an account of the world by id, without creating one: a listed
// account, or a generated one, built if it is not held. s.mu is held.
func (s *Sim) lookupAccount(id string) *Account {
	for _, a := range s.world.AWS.Accounts {
		if a.ID == id {
			return a
		}
	}
	if !s.gen.owns(id) {
		return nil
	}
	a, err := s.gen.cache.get(id)
	if err != nil {
		s.log.Error("build generated account", "account", id, "err", err)
		return nil
	}
	return a
}

// genCache holds the most recently used members (accounts, projects) of a generated
// collection built, at most size, and the overlays of those dropped that differ from
// what the seed builds.
//
// Why overlays rather than pinning what was written to: a sweep that applies fixes writes
// to every account, and pinned accounts would bring back memory that grows with the
// organisation. Why a diff rather than a log of write calls replayed: the write handlers
// stamp times and draw ids from the simulator's sequence, so a replay would not give back
// the same keys and dates. A diff taken when a member leaves the cache holds exactly the
// resources that differ from what the seed builds — a role whose session recorded its
// use, a security group a fix narrowed, a key created — typically a handful of a 4,000
// resources account.
type genCache[T any] struct {
	size int
	// base builds member id as the seed makes it, with drift epochs 1…epoch applied.
	base func(id string, epoch int) (*T, error)
	// drift applies drift epoch k to a member; epochs is the current epoch. Both nil
	// when the collection does not drift.
	drift    func(v *T, k int) int
	epochs   func() int
	keyed    []int // the resource lists of T (keyedFields)
	lru      *list.List
	byID     map[string]*list.Element
	overlays map[string]*overlay
	// built and evicted count the members built and dropped since the simulator started.
	built, evicted int
}

// genEntry is one member held built, with the drift epochs applied to it.
type genEntry[T any] struct {
	id    string
	v     *T
	epoch int
}

func newGenCache[T any](size int, base func(string, int) (*T, error)) *genCache[T] {
	return &genCache[T]{size: size, base: base, keyed: keyedFields(reflect.TypeFor[T]()), lru: list.New(),
		byID: map[string]*list.Element{}, overlays: map[string]*overlay{}}
}

func (g *genCache[T]) epoch() int {
	if g.epochs == nil {
		return 0
	}
	return g.epochs()
}

// get returns member id, built with its overlay and the drift epochs since, and makes it
// the most recently used; a member over the cache's size is dropped, its changes kept as
// an overlay.
func (g *genCache[T]) get(id string) (*T, error) {
	now := g.epoch()
	if el, ok := g.byID[id]; ok {
		g.lru.MoveToFront(el)
		e := el.Value.(*genEntry[T])
		for e.epoch < now {
			e.epoch++
			g.drift(e.v, e.epoch)
		}
		return e.v, nil
	}
	ov := g.overlays[id]
	from := now
	if ov != nil {
		from = ov.epoch
	}
	v, err := g.base(id, from)
	if err != nil {
		return nil, err
	}
	if ov != nil {
		// The overlay's resources are in the member from now on; a later drop takes a
		// new diff.
		ov.apply(reflect.ValueOf(v), g.keyed)
		delete(g.overlays, id)
	}
	for k := from + 1; k <= now; k++ {
		g.drift(v, k)
	}
	g.built++
	g.byID[id] = g.lru.PushFront(&genEntry[T]{id: id, v: v, epoch: now})
	for g.lru.Len() > g.size {
		g.evict(g.lru.Back())
	}
	return v, nil
}

// evict drops a member from the cache, keeping what differs from its base as an overlay.
func (g *genCache[T]) evict(el *list.Element) {
	e := el.Value.(*genEntry[T])
	g.lru.Remove(el)
	delete(g.byID, e.id)
	g.evicted++
	base, err := g.base(e.id, e.epoch)
	var ov *overlay
	if err != nil {
		ov = &overlay{whole: reflect.ValueOf(e.v)} // cannot tell what changed: keep it all
	} else {
		ov = diffValue(reflect.ValueOf(base), reflect.ValueOf(e.v), g.keyed)
	}
	if ov != nil {
		ov.epoch = e.epoch
		g.overlays[e.id] = ov
	}
}

// stats fills the cache's part of GeneratedStats.
func (g *genCache[T]) stats() (held, built, evicted, overlays, resources int) {
	for _, ov := range g.overlays {
		n, _ := ov.size()
		resources += n
	}
	return g.lru.Len(), g.built, g.evicted, len(g.overlays), resources
}

// overlay is what a generated member holds that its base (the seed's content with the
// drift epochs up to epoch) does not.
type overlay struct {
	epoch int
	// header, when valid, points to a copy of the member's fields other than its resource
	// lists (an account's root, password policy, alias…), one of which differs.
	header reflect.Value
	// lists are the changed resource lists, by field index.
	lists map[int]*listDiff
	// whole is the member itself, when it could not be compared.
	whole reflect.Value
}

// listDiff is how one resource list differs from its base: resources changed (by key),
// removed, and added at its end; or, when the order changed otherwise, the whole list.
type listDiff struct {
	changed map[string]reflect.Value
	deleted map[string]bool
	added   []reflect.Value
	full    reflect.Value
}

// keyedFields are the fields of struct type t that are lists of resources ([]*T of a
// struct).
func keyedFields(t reflect.Type) []int {
	var out []int
	for i := range t.NumField() {
		f := t.Field(i).Type
		if f.Kind() == reflect.Slice && f.Elem().Kind() == reflect.Pointer && f.Elem().Elem().Kind() == reflect.Struct {
			out = append(out, i)
		}
	}
	return out
}

// keyer names the resources of one list within it: its region, if it has one, and its
// ARN, id, name or email, the first that is set. The fields are found once per list, not
// by name for every resource: an evicted account's diff names each of its thousands.
type keyer struct {
	names  [][]int // ARN, ID, Name, Email: the string fields of the type, in that order
	region []int   // nil when the type has no Region string
}

// keyerOf is the keyer of a list of t (a slice of pointers to a struct).
func keyerOf(t reflect.Type) keyer {
	e := t.Elem().Elem()
	var k keyer
	for _, name := range []string{"ARN", "ID", "Name", "Email"} {
		if f, ok := e.FieldByName(name); ok && f.Type.Kind() == reflect.String {
			k.names = append(k.names, f.Index)
		}
	}
	if f, ok := e.FieldByName("Region"); ok && f.Type.Kind() == reflect.String {
		k.region = f.Index
	}
	return k
}

// key names resource v (a pointer to a struct of the keyer's type).
func (k keyer) key(v reflect.Value) string {
	e := v.Elem()
	key := ""
	for _, i := range k.names {
		if s := e.FieldByIndex(i).String(); s != "" {
			key = s
			break
		}
	}
	if k.region != nil {
		key = e.FieldByIndex(k.region).String() + "/" + key
	}
	return key
}

// diffValue is what cur holds that base does not (both pointers to a struct whose
// resource lists are keyed), or nil when they are the same.
func diffValue(base, cur reflect.Value, keyed []int) *overlay {
	bv, cv := base.Elem(), cur.Elem()
	ov := &overlay{lists: map[int]*listDiff{}}
	for _, fi := range keyed {
		if d := diffList(bv.Field(fi), cv.Field(fi)); d != nil {
			ov.lists[fi] = d
		}
	}
	bh, ch := reflect.New(bv.Type()), reflect.New(cv.Type())
	bh.Elem().Set(bv)
	ch.Elem().Set(cv)
	for _, fi := range keyed {
		bh.Elem().Field(fi).SetZero()
		ch.Elem().Field(fi).SetZero()
	}
	if !reflect.DeepEqual(bh.Interface(), ch.Interface()) {
		ov.header = ch
	}
	if !ov.header.IsValid() && len(ov.lists) == 0 {
		return nil
	}
	return ov
}

// diffList compares a resource list with its base; nil when they hold the same.
func diffList(base, cur reflect.Value) *listDiff {
	keys := keyerOf(base.Type())
	byKey := make(map[string]reflect.Value, base.Len())
	for j := range base.Len() {
		k := keys.key(base.Index(j))
		if _, dup := byKey[k]; dup {
			// Resources without a key of their own cannot be told apart: keep the list.
			if reflect.DeepEqual(base.Interface(), cur.Interface()) {
				return nil
			}
			return &listDiff{full: cur}
		}
		byKey[k] = base.Index(j)
	}
	d := &listDiff{changed: map[string]reflect.Value{}, deleted: map[string]bool{}}
	seen := make(map[string]bool, cur.Len())
	for j := range cur.Len() {
		// The element itself, not a reference into the list's array, which would keep
		// every resource of the dropped account alive.
		e := reflect.ValueOf(cur.Index(j).Interface())
		k := keys.key(e)
		seen[k] = true
		b, ok := byKey[k]
		switch {
		case !ok:
			d.added = append(d.added, e)
		case !reflect.DeepEqual(b.Interface(), e.Interface()):
			d.changed[k] = e
		}
	}
	for k := range byKey {
		if !seen[k] {
			d.deleted[k] = true
		}
	}
	if len(d.changed) == 0 && len(d.deleted) == 0 && len(d.added) == 0 {
		return nil
	}
	// Rebuilt, the list must be in the order it was: otherwise keep it whole (a resource
	// deleted and created again with its name, which lands at the end).
	got := d.rebuild(base)
	same := got.Len() == cur.Len()
	for j := 0; same && j < cur.Len(); j++ {
		same = keys.key(got.Index(j)) == keys.key(cur.Index(j))
	}
	if !same {
		return &listDiff{full: cur}
	}
	return d
}

// rebuild lays the diff over a base list.
func (d *listDiff) rebuild(base reflect.Value) reflect.Value {
	if d.full.IsValid() {
		return d.full
	}
	keys := keyerOf(base.Type())
	out := reflect.MakeSlice(base.Type(), 0, base.Len()+len(d.added))
	for j := range base.Len() {
		e := base.Index(j)
		k := keys.key(e)
		if d.deleted[k] {
			continue
		}
		if c, ok := d.changed[k]; ok {
			e = c
		}
		out = reflect.Append(out, e)
	}
	for _, e := range d.added {
		out = reflect.Append(out, e)
	}
	return out
}

// apply lays the overlay over a built base member (a pointer to a struct).
func (ov *overlay) apply(v reflect.Value, keyed []int) {
	if ov.whole.IsValid() {
		v.Elem().Set(ov.whole.Elem())
		return
	}
	av := v.Elem()
	if ov.header.IsValid() {
		hv := ov.header.Elem()
		for i := range av.NumField() {
			if !slices.Contains(keyed, i) && av.Type().Field(i).IsExported() {
				av.Field(i).Set(hv.Field(i))
			}
		}
	}
	for fi, d := range ov.lists {
		av.Field(fi).Set(d.rebuild(av.Field(fi)))
	}
}

// faultOf is the fault the calls of account id meet, or nil (see
// GeneratedAccounts.FaultShare). The configuration never changes once the simulator
// runs: no lock is needed.
func (g *genOrg) faultOf(id string) *Fault {
	if g == nil {
		return nil
	}
	return g.cfg.faultOf(id, g.management)
}

// orgAccounts is how many accounts the organisation has, listed and generated.
func (s *Sim) orgAccounts() int {
	n := len(s.world.AWS.Accounts)
	if s.gen != nil {
		n += s.gen.cfg.Accounts
	}
	return n
}

// orgAccountAt is the organisation's account i: a listed account, or what Organizations
// says of a generated one, which is not built for it.
func (s *Sim) orgAccountAt(i int) *Account {
	if i < len(s.world.AWS.Accounts) {
		return s.world.AWS.Accounts[i]
	}
	return s.gen.cfg.header(i - len(s.world.AWS.Accounts))
}

// orgAccountByID finds an account of the organisation as orgAccountAt does, by id.
func (s *Sim) orgAccountByID(id string) *Account {
	for _, a := range s.world.AWS.Accounts {
		if a.ID == id {
			return a
		}
	}
	if s.gen != nil {
		if i := s.gen.cfg.index(id); i >= 0 {
			return s.gen.cfg.header(i)
		}
	}
	return nil
}

// size counts the resources the overlay holds, and whether it holds a whole list (or
// account), for tests and logs: an overlay should hold a few resources, never a list.
func (ov *overlay) size() (resources int, whole bool) {
	for _, d := range ov.lists {
		if d.full.IsValid() {
			return resources + d.full.Len(), true
		}
		resources += len(d.changed) + len(d.deleted) + len(d.added)
	}
	return resources, ov.whole.IsValid()
}

// GeneratedStats is the state of the cache of generated accounts or projects (GET
// /_sim/generated): how many are held built and how often they were built and dropped —
// a benchmark checks with it that the cache holds the accounts its clients read at once
// (built close to the accounts read) — and what the overlays hold.
type GeneratedStats struct {
	// Members is how many accounts (projects) are generated.
	Members int `json:"members"`
	Cache   int `json:"cache"`
	Held    int `json:"held"`
	Built   int `json:"built"`
	Evicted int `json:"evicted"`
	// Overlays counts the dropped accounts that differ from their seed's content, and
	// OverlayResources the resources they hold.
	Overlays         int `json:"overlays"`
	OverlayResources int `json:"overlay_resources"`
	DriftEpochs      int `json:"drift_epochs"`
}

// GeneratedStats reports the generated organisation's cache; zero when there is none.
func (s *Sim) GeneratedStats() GeneratedStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gen
	if g == nil {
		return GeneratedStats{}
	}
	st := GeneratedStats{Members: g.cfg.Accounts, Cache: g.cfg.Cache, DriftEpochs: len(g.epochs)}
	st.Held, st.Built, st.Evicted, st.Overlays, st.OverlayResources = g.cache.stats()
	return st
}
