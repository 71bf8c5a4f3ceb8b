// Package robustness runs the reference server under hostile clients and
// damaged storage (issue #18): randomized concurrent writers and watchers
// checked against the acknowledged history, kill -9 durability rounds,
// damaged data files, and many watches abandoned by their clients. Every
// server it starts listens on 127.0.0.1 and every loop is bounded in count
// and time; `make robustness` runs it.
package robustness
