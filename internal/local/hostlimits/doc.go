// Package hostlimits reads the host's limits that local nodes run into (inotify instances and
// watches, open files, threads, memory, disk) and checks them before nodes start, so that a
// command refuses with the limit's name, its value, what is needed and how to raise it, instead
// of a component failing later on "too many open files" while a wait runs to its timeout.
package hostlimits
