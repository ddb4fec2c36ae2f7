// How the system's Node processes run, as the image runs them (deploy/Dockerfile):
// the launcher starts each with these, and the bench's bare proxy (the gateway's
// floor) too, so that the floor differs from the gateway by its code alone.

/** 4 MB semi-spaces instead of V8's 16: about 15 MB less resident memory per idle process, for more frequent minor collections. */
export const NODE_FLAGS = ['--max-semi-space-size=4'];

/** glibc's malloc with two arenas that give memory back above 128 KB: about 14 MB less resident memory each. */
export const MALLOC_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072' };
