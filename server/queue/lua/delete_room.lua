-- KEYS: cfg seq* queue* head* tokens active done rate tick soldout counts departed* departing* sweep* seen* seenbase* bucket draw drawlease drawn prequeue withdrawn nets away* awaytk* back* camps attr campof camp* campbase* lastphase jtis jtiof sessions powcur powprev powused waitslot adapt adapthist bypass pqline pqn ldrawn*
-- delete_room.lua: removes a room and everything it holds, its line
-- and every line's included. Waiting pages hear nothing more; their next poll says the room
-- is gone. UNLINK: a line of a million entries is freed in the background,
-- so that this call stays short.
-- Reply: {existed (1 or 0), keys deleted}
local existed = redis.call('EXISTS', K.cfg)
local n = redis.call('UNLINK', unpack(KEYS))
return {existed, n}
