-- KEYS: cfg seq queue head tokens active done rate tick soldout counts departed departing sweep seen seenbase bucket draw drawlease drawn prequeue withdrawn nets away awaytk back camps attr campof camp campbase lastphase jtis jtiof sessions powcur powprev powused waitslot adapt adapthist bypass
-- delete_room.lua: removes a room and everything it holds, its line
-- included. Waiting pages hear nothing more; their next poll says the room
-- is gone. UNLINK: a line of a million entries is freed in the background,
-- so that this call stays short.
-- Reply: {existed (1 or 0), keys deleted}
local existed = redis.call('EXISTS', K.cfg)
local n = redis.call('UNLINK', K.cfg, K.seq, K.queue, K.head, K.tokens, K.active, K.done, K.rate, K.tick, K.soldout, K.counts,
  K.departed, K.departing, K.sweep, K.seen, K.seenbase, K.bucket,
  K.draw, K.drawlease, K.drawn, K.prequeue, K.withdrawn, K.nets, K.away, K.awaytk, K.back,
  K.camps, K.attr, K.campof, K.camp, K.campbase, K.lastphase, K.jtis, K.jtiof, K.sessions,
  K.powcur, K.powprev, K.powused, K.waitslot, K.adapt, K.adapthist, K.bypass)
return {existed, n}
