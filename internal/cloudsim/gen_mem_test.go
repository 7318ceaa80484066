package cloudsim

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
)

// TestGenerated_memoryFlat reads every account of generated organisations of two sizes,
// one account after another (IAM's authorization details, every region's security
// groups), and checks that the simulator's memory does not grow with the number of
// accounts: the heap left after a collection at the end (the simulator's state, the
// clients' being garbage) stays within 25% + 4 MiB. It reports that, the peak of the heap
// in use while reading, and the process's peak RSS (VmHWM, reset before each size).
//
// By default it reads 8 then 32 accounts of 400 resources through a cache of 4;
// WARDEN_SIM_ORG_MEMORY=50,500 reads organisations of those sizes of 4,000-resource
// accounts (4,025 as the sweep benchmark counts them) through the default cache of 16:
//
//	WARDEN_SIM_ORG_MEMORY=50,500 go test ./internal/cloudsim -run TestGenerated_memoryFlat -v -timeout 60m
func TestGenerated_memoryFlat(t *testing.T) {
	sizes, resources, cache := []int{8, 32}, 400, 4
	if env := os.Getenv("WARDEN_SIM_ORG_MEMORY"); env != "" {
		sizes, resources, cache = nil, 4000, 0
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 2 {
				t.Fatalf("WARDEN_SIM_ORG_MEMORY: %q: want sizes such as 50,500", env)
			}
			sizes = append(sizes, n)
		}
	}
	var retained []uint64
	for _, n := range sizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			r := genMemoryRun(t, n, resources, cache)
			retained = append(retained, r)
		})
	}
	for i := 1; i < len(retained); i++ {
		if retained[i] > retained[0]+retained[0]/4+4<<20 {
			t.Errorf("%d accounts retain %.1f MiB, %d accounts %.1f MiB: the simulator grows with the organisation",
				sizes[0], mib(retained[0]), sizes[i], mib(retained[i]))
		}
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// genMemoryRun reads all n accounts and returns the heap in use after a collection at
// the end, while the simulator still serves.
func genMemoryRun(t *testing.T, n, resources, cache int) uint64 {
	runtime.GC()
	resetHWM()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	start := time.Now()
	sim, cfg := sdkSim(t, genTestWorld(n, resources, cache, 1), Options{})
	// One connection pool for every client, as one collector process has: a pool per
	// client would leave an idle connection per account open on both sides.
	cfg.HTTPClient = &http.Client{}
	ctx := context.Background()
	got := 0
	for i := 1; i < n; i++ {
		c := assumeInto(t, cfg, fmt.Sprintf("2%011d", i))
		p := iam.NewGetAccountAuthorizationDetailsPaginator(iam.NewFromConfig(c), &iam.GetAccountAuthorizationDetailsInput{})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got += len(page.UserDetailList) + len(page.RoleDetailList) + len(page.GroupDetailList) + len(page.Policies)
		}
		for _, region := range genRegions {
			sp := ec2.NewDescribeSecurityGroupsPaginator(ec2.NewFromConfig(c, func(o *ec2.Options) { o.Region = region }), &ec2.DescribeSecurityGroupsInput{})
			for sp.HasMorePages() {
				page, err := sp.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				got += len(page.SecurityGroups)
			}
		}
	}
	close(stop)
	wg.Wait()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var built, overlays int
	sim.Do(func(*World) { built, overlays = sim.gen.cache.built, len(sim.gen.cache.overlays) })
	t.Logf("%d accounts × %d resources: read %d resources in %v; heap in use: peak %.1f MiB, after GC %.1f MiB; VmHWM %s; %d accounts built, %d overlays",
		n, resources, got, time.Since(start).Round(time.Millisecond), mib(peak.Load()), mib(ms.HeapInuse), hwm(), built, overlays)
	if got < (n-1)*resources*9/10 {
		t.Errorf("read %d resources; want about %d", got, (n-1)*resources)
	}
	return ms.HeapInuse
}

// resetHWM resets the process's peak RSS (Linux: clear_refs 5), where it can.
func resetHWM() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// hwm is the process's peak RSS since resetHWM, or "?" off Linux.
func hwm() string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return fmt.Sprintf("%.0f MiB", float64(kb)/1024)
		}
	}
	return "?"
}

// BenchmarkGeneratedAccount builds one generated account of 4,000 resources after
// another through a cache of one, as a sweep reading accounts in turn does: each build
// also drops the previous account, comparing it with its base for the overlay. It runs
// under the simulator's lock, so it bounds how many accounts a second it can serve.
func BenchmarkGeneratedAccount(b *testing.B) {
	sim, err := New(genTestWorld(1_000_000, 4000, 1, 1), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		sim.mu.Lock()
		a := sim.lookupAccount(fmt.Sprintf("2%011d", i))
		sim.mu.Unlock()
		if a == nil || len(a.Roles) < 1600 {
			b.Fatalf("account %d: %v", i, a)
		}
	}
}
