#!/usr/bin/env ruby
# frozen_string_literal: true

# Bolt task clone_army::ramp (tasks/ramp.json): parameters as JSON on stdin,
# passed to the clone-army helper as argv, never through a shell. The
# shared code travels with the task (metadata "files") to
# $PT__installdir/clone_army/lib/...; run from a module checkout it is found
# next to this file.
installdir = ENV.fetch('PT__installdir', nil)
module_root = installdir ? File.join(installdir, 'clone_army') : File.expand_path('..', __dir__)
require File.join(module_root, 'lib/puppet_x/clone_army/task')

exit PuppetX::CloneArmy::Task.main(:ramp)
