# frozen_string_literal: true

require 'json'
require_relative 'stats'

module CloneArmyBench
  # What the bench reads off the sandbox: the helper's JSON answers (`clone
  # list`, `base list`, `report`, `exec`, `report --server`, `report --format
  # html`) and inside.sh's lines. Each reader takes the text as it came and
  # says what a figure needs; an answer that is not what it should be is
  # nil (a figure "not measured") or an Unreadable naming what was read.
  module Readings
    # The fleet's clones: the class names them clone1..N; the bench's own
    # (benchcpu, benchd*) are apart.
    FLEET_CLONE = %r{\Aclone[0-9]+\z}.freeze
    # A cgroup's usage_usec, a count: digits only.
    COUNT = %r{\A[0-9]+\z}.freeze
    # A status, run_report or failure kind as the protocol spells them.
    PROTOCOL_WORD = %r{\A[a-z][a-z-]{0,31}\z}.freeze

    # An answer that is not what the bench asked for.
    class Unreadable < RuntimeError; end

    module_function

    # The protocol's `result` of a helper answer (the envelope's ok is the
    # caller's business: a failed answer has no result).
    def result(text, what)
      doc = JSON.parse(text)
      raise Unreadable, "#{what}: not a JSON object" unless doc.is_a?(Hash)

      doc['result'] || {}
    rescue JSON::ParserError => e
      raise Unreadable, "#{what}: not JSON (#{e.message.lines.first.to_s.strip})"
    end

    # Fleet clones `clone list` says are running.
    def running_count(text)
      clones = Array(result(text, 'clone-army clone list')['clones'])
      clones.count { |c| fleet?(c) && c['state'] == 'running' }
    end

    # The first base `base list` lists.
    def base_name(text)
      base = Array(result(text, 'clone-army base list')['bases']).first
      (base && base['name']) or raise Unreadable, 'clone-army base list: no base'
    end

    # The watcher's lines "<clone> <end> <succeeded> <total seconds> <status>
    # <run_report> <failure kinds>" for each fleet clone whose last run (`report`)
    # ended at or after `since` (whole epoch seconds); none from an answer that is
    # not a report. succeeded and the kinds are the helper's judgement (a cached
    # catalog or a 5xx fails a run whatever its summary says), run_report whether
    # the judgement had the run's own report ('-' for none, kinds '-' for none).
    def watched_runs(text, since)
      clones = Array(result(text, 'clone-army report')['clones'])
      clones.select { |c| fleet?(c) && c['last_run'].is_a?(Numeric) && c['last_run'] >= since }.map do |c|
        "#{c['name']} #{c['last_run']} #{json_word(c['succeeded'])} #{c['total_time'] || 0} " \
          "#{word(c['status'])} #{word(c['run_report'])} #{kinds_word(c['failure_kinds'])}\n"
      end
    rescue Unreadable
      []
    end

    # Whether `clone-army exec` ran the command in its (one) clone.
    def exec_ran?(text)
      clone = Array(result(text, 'clone-army exec')['clones']).first
      !clone.nil? && clone['error'].nil?
    rescue Unreadable
      false
    end

    # The exit code of the command `clone-army exec` ran in its (one) clone; nil
    # when it did not run or a signal ended it.
    def exec_exit(text)
      clone = Array(result(text, 'clone-army exec')['clones']).first
      clone && clone['exit_code']
    end

    # From `report --server`: the fleet clones' catalog sizes (the summaries'
    # resources.total), the server's compile mean (ms, or nil) and the note
    # that goes with it; nil for an answer that is not a report.
    def catalog(text)
      res = result(text, 'clone-army report --server')
      resources = Array(res['clones']).filter_map { |c| c['resources'] if fleet?(c) }
      server = res['server'] || {}
      { resources: resources, compile_mean: server.dig('compile', 'mean_ms'), note: server_note(server) }
    rescue Unreadable
      nil
    end

    def server_note(server)
      "#{server.dig('compile', 'count') || '?'} compiles; JRuby wait mean #{server.dig('jruby', 'average_wait_time_ms') || '?'} ms; " \
        "#{server['error']}"
    end

    # A value as jq -r prints it: null for none.
    def json_word(value)
      value.nil? ? 'null' : value.to_s
    end

    # One word of a watcher line: a protocol word as it came, '-' for none or for
    # anything that is not one word of the protocol's kind (a clone's summary is
    # the clone's, and a space in it would shift the columns).
    def word(value)
      value.is_a?(String) && PROTOCOL_WORD.match?(value) ? value : '-'
    end

    def kinds_word(kinds)
      words = Array(kinds).map { |k| word(k) }.reject { |k| k == '-' }
      words.empty? ? '-' : words.join(',')
    end

    def fleet?(clone)
      clone.is_a?(Hash) && FLEET_CLONE.match?(clone['name'].to_s)
    end

    # The samples a page was drawn from (`report --format html`'s answer).
    def page_samples(text)
      result(text, 'clone-army report --format html')['samples']
    rescue Unreadable
      nil
    end

    # How many of inside.sh wait-booted's "<clone> <state> <seconds>" lines say booted.
    def booted_count(text)
      text.each_line.map(&:split).count { |_, state| ['running', 'degraded'].include?(state) }
    end

    # A usage_usec reading (inside.sh cpu-usec, unit-cpu-usec), or Unreadable.
    def usec(text, what)
      word = text.to_s.strip
      raise Unreadable, "#{what}: not a usage_usec count: #{word.inspect}" unless COUNT.match?(word)

      Integer(word, 10)
    end

    # Numbers a line each (inside.sh cpu-usec of several clones, pid1-cpu, host-run).
    def numbers(text, what)
      words = text.to_s.split
      raise Unreadable, "#{what}: no reading" if words.empty?

      words.map { |w| Float(w) }
    rescue ArgumentError
      raise Unreadable, "#{what}: not numbers: #{text.to_s.strip.inspect}"
    end
  end
end
