# @summary A load test from Bolt: the fleet, its check-in, a recorded run or a ramp to the knee, and its page fetched back.
#
# On every target (a load host):
#
# 1. `apply_prep`, then class `clone_army` with `server`, `num_clones`,
#    `runinterval`, `record => true` and `class_params`: the recorder samples
#    the fleet as it comes up, and its directory (the directory of the class's
#    `record_file`) is where the tasks below read and write.
# 2. Waits, every `checkin_poll` seconds up to `checkin_timeout`, until the
#    `clone_army::report` task says every clone of every target has a last run
#    that succeeded (`succeeded` of each clone in its `result.clones`).
# 3. `mode => 'record'`: records `duration` seconds more. `mode => 'ramp'`:
#    stops the fleet (`clone_army::fleet`, `action => 'stop'`) and runs
#    `clone_army::ramp` with `ramp`'s parameters, whose `server`, `interval`
#    and `max_clones` default to the plan's `server`, `runinterval` and
#    `num_clones`.
# 4. Draws the run's page with `clone_army::report` (`from` the recorder's
#    timeline or the ramp's, `format => 'html'`) and downloads it, and the
#    ramp's baseline, into `destination` under the Bolt project's downloads
#    directory: `<destination>/<run>/page/<target>/<run>.html` and
#    `<destination>/<run>/baseline/<target>/<run>.json`, where `<run>` is
#    `load_test-<UTC time>`, also the files' names on the targets.
#
# It returns a Hash by target name: `summary` (the recorded run's summary,
# the report task's `result` for `from`) or `verdict` (the ramp's, with
# `baseline` its whole answer), `files` (where each file is on the target)
# and `downloaded` (where each landed on the Bolt host). The fleet and its
# recorder keep running; `clone_army::fleet` with `action => 'stop'` stops
# the clones, and the class with `record => false` the recorder.
#
# The plan fails (`fail_plan`) naming the parameter or the targets and why:
# a `class_params` key the plan sets itself, a `ramp` without `step` or given
# in record mode, a `destination` outside the downloads directory, a step
# that failed on a target (the apply, a task, a download), and the clones not
# checked in by `checkin_timeout` (kind `clone_army/checkin-timeout`, each
# target with what it waits for).
#
# From the command line:
#
# ```shell
# bolt plan run clone_army::load_test -t loadhosts server=puppet.example.com num_clones=100 duration=3600
# bolt plan run clone_army::load_test -t loadhosts server=puppet.example.com num_clones=500 mode=ramp \
#   ramp='{"step": 25, "max_p95": 30, "max_error_rate": 1}'
# ```
#
# Bolt 3 or later (`ctrl::do_until` with its `limit` and `interval`). The
# plan is untested under Bolt here; spec/plans/load_test_spec.rb holds its
# task parameters to the tasks' metadata, and its functions have their specs.
#
# @param targets
#   The load hosts.
#   Example: `targets => 'loadhosts'` (`-t loadhosts`)
# @param server
#   The Puppet Server under test, as class clone_army's `server` takes it (a
#   host name; `server_port` goes in `class_params`).
#   Example: `server => 'puppet.example.com'`
# @param num_clones
#   Clones on each load host, as the class's `num_clones`.
#   Example: `num_clones => 100`
# @param runinterval
#   The clones' run interval in seconds, as the class's `runinterval`; the
#   ramp's `interval` unless `ramp` gives one.
#   Example: `runinterval => 1800`
# @param mode
#   `record`: record `duration` seconds of the fleet once it has checked in.
#   `ramp`: then stop it and ramp it up step by step to the knee.
#   Example: `mode => 'ramp'`
# @param duration
#   Record mode: seconds to record after every clone has checked in.
#   Example: `duration => 7200`
# @param ramp
#   Ramp mode: the `clone_army::ramp` task's parameters (`step` at least, and
#   a bound), e.g. `max_p95`, `max_error_rate`, `hold`, `label`.
#   Example: `ramp => { 'step' => 25, 'max_p95' => 30, 'max_error_rate' => 1 }`
# @param class_params
#   More parameters of class clone_army (not `server`, `num_clones`,
#   `runinterval` or `record`, which the plan sets).
#   Example: `class_params => { 'run_mode' => 'timer', 'record_every' => 5 }`
# @param checkin_timeout
#   Seconds to wait for every clone to check in before the plan fails.
#   Example: `checkin_timeout => 3600`
# @param checkin_poll
#   Seconds between two looks at the fleet while waiting for it.
#   Example: `checkin_poll => 60`
# @param destination
#   Where the files go on the Bolt host: a relative directory under the
#   project's downloads directory (Bolt's `download_file` takes no other).
#   Example: `destination => 'load-tests'`
#
# @example A recorded hour of 100 clones on each load host
#   run_plan('clone_army::load_test', 'loadhosts', { 'server' => 'puppet.example.com', 'num_clones' => 100, 'duration' => 3600 })
# @example A ramp of 25 clones a step, to a p95 run time of 30 s
#   $answer = run_plan('clone_army::load_test', 'loadhosts', {
#     'server'     => 'puppet.example.com',
#     'num_clones' => 500,
#     'mode'       => 'ramp',
#     'ramp'       => { 'step' => 25, 'max_p95' => 30, 'max_error_rate' => 1 },
#   })
#   out::message($answer.map |$host, $found| { "${host}: ${found['verdict']['summary']}" }.join("\n"))
plan clone_army::load_test (
  TargetSpec $targets,
  Clone_army::Hostname $server,
  Integer[1] $num_clones,
  Integer[60, 604800] $runinterval = 1800,
  Enum['record', 'ramp'] $mode = 'record',
  Integer[0] $duration = 3600,
  Hash[String[1], Data] $ramp = {},
  Hash[String[1], Data] $class_params = {},
  Integer[1] $checkin_timeout = 3600,
  Integer[1] $checkin_poll = 30,
  String[1] $destination = 'clone_army',
) {
  $hosts = get_targets($targets)
  if $hosts.empty {
    fail_plan('targets names no load host: give one or more with -t', 'clone_army/invalid-parameter', { 'parameter' => 'targets' })
  }
  $set_by_plan = ['server', 'num_clones', 'runinterval', 'record'].filter |$key| { $key in $class_params }
  unless $set_by_plan.empty {
    fail_plan("class_params sets ${set_by_plan.join(', ')}, which the plan sets from its own parameters: leave them out",
      'clone_army/invalid-parameter', { 'parameter' => 'class_params' })
  }
  if $mode == 'record' and !$ramp.empty {
    fail_plan('ramp is for mode => ramp: leave it out, or give mode => ramp', 'clone_army/invalid-parameter', { 'parameter' => 'ramp' })
  }
  if $mode == 'ramp' and !('step' in $ramp) {
    fail_plan('ramp needs step (the clones a step starts) and a bound, e.g. {"step": 25, "max_p95": 30}',
      'clone_army/invalid-parameter', { 'parameter' => 'ramp' })
  }
  # download_file saves under the project's downloads directory only.
  if $destination =~ /\A\// or $destination =~ /(\A|\/)\.\.?(\/|\z)/ {
    fail_plan("destination must be relative to the Bolt project's downloads directory, with no . or .. part; got ${destination}",
      'clone_army/invalid-parameter', { 'parameter' => 'destination' })
  }

  # The files of this run, the same names on every target: the ramp's
  # baseline and timeline and the page, in the recorder's directory.
  $run = "load_test-${Timestamp().strftime('%Y%m%dT%H%M%SZ', 'UTC')}"
  # The recorder's timeline: class clone_army's record_file, its default
  # unless class_params gives one.
  $record_file = $class_params['record_file'] ? {
    undef   => '/var/log/puppet-clone-army/timeline.jsonl',
    default => $class_params['record_file'],
  }

  apply_prep($hosts)
  $class = $class_params + { 'server' => $server, 'num_clones' => $num_clones, 'runinterval' => $runinterval, 'record' => true }
  $applied = apply($hosts, '_catch_errors' => true) {
    class { 'clone_army': * => $class }
  }
  unless $applied.ok {
    $apply_failures = clone_army::failed_targets($applied.to_data)
    fail_plan("class clone_army failed on ${apply_failures}", 'clone_army/apply-failed')
  }

  out::message("Waiting up to ${checkin_timeout} s for ${num_clones} clones on each of ${hosts.length} load hosts to check in")
  $polls = ($checkin_timeout + $checkin_poll - 1) / $checkin_poll
  $checked_in = ctrl::do_until('limit' => $polls, 'interval' => $checkin_poll) || {
    $reports = run_task('clone_army::report', $hosts, { '_catch_errors' => true })
    clone_army::checkin_pending($reports.to_data, $num_clones).empty
  }
  unless $checked_in {
    $last = run_task('clone_army::report', $hosts, { '_catch_errors' => true })
    $pending = clone_army::checkin_pending($last.to_data, $num_clones)
    unless $pending.empty {
      $waiting = $pending.map |$target, $why| { "${target}: ${why}" }.join('; ')
      fail_plan("not every clone checked in within checkin_timeout (${checkin_timeout} s): ${waiting}",
        'clone_army/checkin-timeout', { 'pending' => $pending })
    }
  }

  if $mode == 'record' {
    out::message("Every clone has checked in; recording ${duration} s")
    ctrl::sleep($duration)
    $timeline = $record_file
    $outcome = run_task('clone_army::report', $hosts, { 'from' => $timeline, 'format' => 'json', '_catch_errors' => true })
    unless $outcome.ok {
      $summary_failures = clone_army::failed_targets($outcome.to_data)
      fail_plan("the recorded run's summary failed on ${summary_failures}", 'clone_army/task-failed')
    }
    $kept = {}
  } else {
    $stopped = run_task('clone_army::fleet', $hosts, { 'action' => 'stop', '_catch_errors' => true })
    unless $stopped.ok {
      $stop_failures = clone_army::failed_targets($stopped.to_data)
      fail_plan("stopping the fleet failed on ${stop_failures}", 'clone_army/task-failed')
    }
    $timeline = "${run}.jsonl"
    $server_port = $class_params['server_port']
    $ramp_server = $server_port ? {
      undef   => $server,
      default => "${server}:${server_port}",
    }
    out::message("Ramping ${ramp['step']} clones a step; the baseline is ${run}.json in the recorder's directory")
    $outcome = run_task('clone_army::ramp', $hosts, {
        'server'     => $ramp_server,
        'interval'   => $runinterval,
        'max_clones' => $num_clones,
        'baseline'   => "${run}.json",
        'timeline'   => $timeline,
    } + $ramp + { '_catch_errors' => true })
    unless $outcome.ok {
      $ramp_failures = clone_army::failed_targets($outcome.to_data)
      fail_plan("the ramp failed on ${ramp_failures}", 'clone_army/task-failed')
    }
    $kept = { 'baseline' => $outcome.results.map |$result| { $result.value['result']['output'] } }
  }

  $paged = run_task('clone_army::report', $hosts, {
      'from'          => $timeline,
      'format'        => 'html',
      'output'        => "${run}.html",
      '_catch_errors' => true,
  })
  unless $paged.ok {
    $page_failures = clone_army::failed_targets($paged.to_data)
    fail_plan("drawing the page failed on ${page_failures}", 'clone_army/task-failed')
  }
  $on_targets = $kept + { 'page' => $paged.results.map |$result| { $result.value['result']['page'] } }

  # Each file with one download_file for every target (it empties its
  # destination first), so its path must be the same on every target: the
  # recorder's directory the class was given.
  $downloads = $on_targets.map |$kind, $paths| {
    if $paths.unique.length != 1 {
      fail_plan("the ${kind} is at ${paths.unique.join(', ')} on different targets: give them one record_file",
        'clone_army/invalid-parameter', { 'parameter' => 'class_params' })
    }
    $fetched = download_file($paths[0], "${destination}/${run}/${kind}", $hosts, { '_catch_errors' => true })
    unless $fetched.ok {
      $failed = clone_army::failed_targets($fetched.to_data)
      fail_plan("downloading the ${kind} failed on ${failed}", 'clone_army/download-failed')
    }
    [$kind, $fetched]
  }

  $answer = $hosts.reduce({}) |$answers, $target| {
    $result = $outcome.find($target.name).value['result']
    $found = $mode ? {
      'record' => { 'summary' => $result, 'files' => { 'timeline' => $record_file } },
      default  => {
        'verdict'  => $result['baseline']['verdict'],
        'baseline' => $result,
        'files'    => { 'baseline' => $result['output'], 'timeline' => $result['timeline'] },
      },
    }
    $page = $paged.find($target.name).value['result']['page']
    $landed = $downloads.map |$download| { [$download[0], $download[1].find($target.name).value['path']] }
    $answers + {
      $target.name => $found + { 'files' => $found['files'] + { 'page' => $page }, 'downloaded' => Hash($landed) },
    }
  }
  return($answer)
}
