# @summary How a clone's phase index becomes the offset of its runs in each interval.
#
# * `prefix-even`: the base-2 van der Corput sequence (0, 1/2, 1/4, 3/4,
#   ...) of the interval: every prefix of the fleet runs evenly spread.
# * `fleet-even`: index * interval / count: even only when the whole fleet
#   runs.
#
# See the class parameter `phasing` for the offsets each gives.
#
# @example
#   'prefix-even'
type Clone_army::Phasing = Enum['prefix-even', 'fleet-even']
