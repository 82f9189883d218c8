# @summary What the class asks of every clone in the fleet.
#
# * `present`: the clone exists; a new clone is started once when it is
#   created, after that its run state is left alone (so a host agent run never
#   stops an experiment).
# * `running`: the clone exists and runs.
# * `stopped`: the clone exists and is stopped (its overlay unmounted); a new
#   clone is created stopped.
#
# @example
#   'present'
type Clone_army::Clone_ensure = Enum['present', 'running', 'stopped']
