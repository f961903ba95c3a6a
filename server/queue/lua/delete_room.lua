-- KEYS: cfg seq queue head tokens active done rate tick soldout counts departed departing sweep seen seenbase bucket
-- delete_room.lua: removes a room and everything it holds, its line
-- included. Waiting pages hear nothing more; their next poll says the room
-- is gone.
-- Reply: 1 deleted, 0 no such room
local existed = redis.call('EXISTS', K.cfg)
redis.call('DEL', K.cfg, K.seq, K.queue, K.head, K.tokens, K.active, K.done, K.rate, K.tick, K.soldout, K.counts,
  K.departed, K.departing, K.sweep, K.seen, K.seenbase, K.bucket)
return existed
