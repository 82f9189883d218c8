# frozen_string_literal: true

require_relative 'results'
require_relative 'stats'

module CloneArmyBench
  # The host's CPU over a span of a run, from inside.sh cpu-split's samples: the
  # server's units (Puppet Server, PuppetDB, PostgreSQL) against the clones'
  # machine.slice, per agent run that ended in the span, and the runs a minute the
  # machine's cores could carry at that cost (the physical limit: a core is 60
  # CPU-s a minute).
  module CpuSplit
    SERVER_PARTS = ['server', 'puppetdb', 'postgresql'].freeze
    KEYS = ['cpu_server', 'cpu_clones', 'cpu_per_run'].freeze

    module_function

    # samples: CheckinRaw.cpu; runs: CheckinRaw::Run; span: [from, to];
    # scale: clones, runinterval, host.cpus.
    def figures(samples, runs, span, scale)
      inside = samples.select { |t, _| t >= span[0] && t <= span[1] }
      return not_measured(scale) if inside.size < 2

      used = usage(inside.first, inside.last)
      ended = runs.count { |r| r.ended >= used[:from] && r.ended <= used[:to] }
      per_run = ended.zero? ? nil : (used[:server] + used[:clones]) / ended
      [server_figure(used, ended), clones_figure(used, ended), per_run_figure(used, ended, per_run),
       capacity(per_run, scale)]
    end

    # CPU-s of each part between two samples.
    def usage(first, last)
      delta = ->(name) { ((last[1][name] || 0) - (first[1][name] || 0)) / 1e6 }
      parts = SERVER_PARTS.to_h { |n| [n, delta.call(n)] }
      { from: first[0], to: last[0], parts: parts, server: parts.values.sum, clones: delta.call('clones'),
        host_busy: delta.call('host_busy') }
    end

    def span_note(used, ended)
      "over #{Stats.fixed(used[:to] - used[:from], 0)} s of the second interval, in which #{ended} runs ended"
    end

    def server_figure(used, ended)
      parts = used[:parts].map { |n, s| "#{n} #{Stats.fixed(s, 1)}" }.join(', ')
      Results.figure(key: 'cpu_server', label: "CPU of the server's units (Puppet Server, PuppetDB, PostgreSQL)",
                     value: Float(Stats.fixed(used[:server], 1)), unit: 'CPU-s', target: '–', met: nil,
                     note: "#{parts}; #{span_note(used, ended)}")
    end

    def clones_figure(used, ended)
      Results.figure(key: 'cpu_clones', label: 'CPU of the clones (machine.slice)',
                     value: Float(Stats.fixed(used[:clones], 1)), unit: 'CPU-s', target: '–', met: nil,
                     note: "#{span_note(used, ended)}; the machine was busy #{Stats.fixed(used[:host_busy], 1)} " \
                           'CPU-s (everything on it, other work too)')
    end

    def per_run_figure(used, ended, per_run)
      note = if per_run
               "server #{Stats.fixed(used[:server] / ended)} + clone #{Stats.fixed(used[:clones] / ended)}"
             else
               'no run ended in the span'
             end
      Results.figure(key: 'cpu_per_run', label: 'CPU per agent run, server and clone together',
                     value: per_run && Float(Stats.fixed(per_run)), unit: 'CPU-s', target: '–', met: nil, note: note)
    end

    def not_measured(scale)
      KEYS.map do |key|
        Results.figure(key: key, label: key.tr('_', ' '), value: nil, unit: 'CPU-s', target: '–', met: nil,
                       note: 'not measured: fewer than two CPU samples in the second interval')
      end + [capacity(nil, scale)]
    end

    # The physical limit: the cores' CPU-s a minute over the CPU-s a run costs,
    # against the runs a minute the fleet asks.
    def capacity(per_run, scale)
      cores = scale.dig('host', 'cpus') || 2
      demand = scale.fetch('clones') * 60.0 / scale.fetch('runinterval')
      carry = per_run&.positive? ? cores * 60 / per_run : nil
      Results.figure(key: 'checkin_capacity', label: "runs a minute this host's #{cores} cores could carry at that cost",
                     value: carry && Float(Stats.fixed(carry, 1)), unit: 'runs/min',
                     target: "≥ #{Stats.fixed(demand, 1)} (the fleet's)", met: carry.nil? ? nil : carry >= demand,
                     note: "#{cores * 60} CPU-s a minute / CPU-s per run; the fleet asks " \
                           "#{scale.fetch('clones')} runs per #{scale.fetch('runinterval')} s")
    end
  end
end
