package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Options say how Acquire waits and renews.
type Options struct {
	TTL  time.Duration // the lease's validity; renewed every TTL/3 (default 30s)
	Wait time.Duration // how long to wait for a held lab (0: fail at once)
	Poll time.Duration // how often to retry while waiting (default 1s)
	// Notify receives what the caller should tell the user: a takeover
	// ("took over the lease of ...") or that it is waiting.
	Notify func(msg string)
	Logger *slog.Logger
}

// Held is a lease this process holds and renews until Release.
type Held struct {
	Lease Lease // as taken; renewals move only the stored expiry
	store Store
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	err   error // set by the renewer when the lease was lost
	mu    sync.Mutex
}

// Acquire takes lab's lease for command in store, waiting up to o.Wait
// while another holds it, and renews it in the background. A lab reserved
// by hand ('labctl lab reserve') by the same user, or already held by this
// process, lets the command proceed without a lease of its own: the
// returned Held then releases nothing.
func Acquire(ctx context.Context, store Store, lab, command string, o Options) (*Held, error) {
	if o.TTL <= 0 {
		o.TTL = 30 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Notify == nil {
		o.Notify = func(string) {}
	}
	deadline := time.Now().Add(o.Wait)
	told := false
	for {
		l := New(lab, command, o.TTL)
		replaced, err := store.Take(ctx, l)
		var held *HeldError
		switch {
		case err == nil:
			if replaced != nil {
				o.Notify(fmt.Sprintf("lab %s: took over the lease of %s: %s", lab, replaced, replaced.Stale(time.Now())))
			}
			h := &Held{Lease: l, store: store, stop: make(chan struct{}), done: make(chan struct{})}
			go h.renew(o.TTL, o.Logger)
			return h, nil
		case errors.As(err, &held) && (held.Holder.SameProcess(l) || held.Holder.Manual && held.Holder.User == l.User):
			return &Held{Lease: held.Holder}, nil // not ours to renew or release
		case errors.As(err, &held) && time.Now().Before(deadline):
			if !told {
				o.Notify(fmt.Sprintf("%v; waiting up to %s", err, time.Until(deadline).Round(time.Second)))
				told = true
			}
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for %v: %w", err, ctx.Err())
			case <-time.After(o.Poll):
			}
		default:
			return nil, err
		}
	}
}

func (h *Held) renew(ttl time.Duration, log *slog.Logger) {
	defer close(h.done)
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	l := h.Lease // the token never changes; the expiry lives in the store
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			l.Expires = time.Now().UTC().Add(ttl)
			if err := h.store.Renew(context.Background(), l); err != nil {
				if log != nil {
					log.Warn("lease renewal failed", "lab", l.Lab, "err", err)
				}
				if errors.Is(err, ErrLost) {
					h.mu.Lock()
					h.err = err
					h.mu.Unlock()
					return
				}
				// any other error may pass (an NFS hiccup): the next tick retries
			}
		}
	}
}

// Err is non-nil once the lease was lost (taken over by another).
func (h *Held) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Release stops renewing and removes the lease (if this Held owns one).
func (h *Held) Release(ctx context.Context) error {
	if h == nil || h.store == nil {
		return nil
	}
	var err error
	h.once.Do(func() {
		close(h.stop)
		<-h.done
		if err = h.Err(); err == nil {
			err = h.store.Release(ctx, h.Lease)
		}
	})
	return err
}
