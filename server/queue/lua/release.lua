-- KEYS: tokens
-- release.lua: CLAIMED -> READY after an order attempt rolled back, by the
-- claim's holder only: a late release of an older claim is refused, so it
-- cannot undo a newer one. A failed attempt (ARGV[4] > 0) counts against
-- the pass; the ARGV[5]-th failure pauses it for ARGV[4] ms.
-- ARGV: 2 visitor, 3 holder, 4 pause ms (0: not the buyer's failure),
--   5 failures before a pause
-- Reply: 1 released, 2 released and paused, 0 no such pass (or expired),
--   -3 not claimed by this holder
local e = getPass(ARGV[2])
local nowMs = math.floor(nowUs() / 1000)
if not e or e.s == 'U' or e.x <= nowMs then return 0 end
if e.s ~= 'C' or e.h ~= ARGV[3] then return -3 end
e.s, e.c, e.h = 'R', 0, '-'
local code = 1
local pause = tonumber(ARGV[4])
if pause > 0 then
  e.f = e.f + 1
  if e.f >= tonumber(ARGV[5]) then
    e.f, e.p, code = 0, nowMs + pause, 2
  end
end
putPass(ARGV[2], e)
return code
