// Package asdeployed holds no code: its tests build every cloud client
// reclaim uses through the constructor production uses, in a process whose
// environment is a pod's (internal/testenv.Pod: no HOME, no CA or proxy
// variables, the image's non-root user), and make one call to a local fake
// with each. They also try each variable docs/operations.md lists as read
// from the environment, present and absent.
package asdeployed
