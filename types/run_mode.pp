# @summary How a clone's agent is scheduled.
#
# * `daemon`: the agent service, a run every `runinterval` seconds.
# * `timer`: a systemd timer starts one-shot agent runs; an idle clone holds
#   no Ruby process.
# * `manual`: no scheduled runs; runs only on demand (`clone-army exec`).
# * `apply`: masterless; a systemd timer starts `puppet apply` runs of the
#   `apply_source` bound into the clone, asking no server.
#
# See the class parameter `run_mode` for what each runs and costs.
#
# @example
#   'timer'
type Clone_army::Run_mode = Enum['daemon', 'timer', 'manual', 'apply']
