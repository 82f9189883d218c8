# frozen_string_literal: true

require 'json'
require_relative 'checkin_figures'
require_relative 'growth'
require_relative 'stats'
require_relative 'pss'
require_relative 'runs'
require_relative 'results'

module CloneArmyBench
  # Re-derives a committed result's figures from what it kept: the raw readings in
  # <stamp>.raw/ and the runs each median quotes in its note. A figure that is one
  # timed reading (an apply's wall time, say) has nothing below it and is kept as
  # measured; so is any figure whose raw data an older run did not keep.
  class Derive
    RUNS_NOTE = %r{runs: ([0-9.]+(?: [0-9.]+)*)}.freeze
    MEDIAN_KEYS = %r{\A(noop_apply_\d+|empty_apply_\d+|cpu_clone|cpu_clone_uncached|cpu_plain|cpu_host)\z}.freeze
    JUDGED_KEYS = ['pss_timer', 'pss_daemon', 'cpu_ratio', 'cpu_clone'].freeze

    attr_reader :doc, :prefix

    # prefix: bench/results/<stamp> (a trailing .json is dropped).
    def initialize(prefix)
      @prefix = prefix.sub(%r{\.json\z}, '')
      @doc = JSON.parse(File.read("#{@prefix}.json"))
      @raw = "#{@prefix}.raw"
    end

    # The document with every derivable figure derived again.
    def derived
      figures = @doc['figures'].map(&:dup)
      by_key = figures.to_h { |f| [f['key'], f] }
      @derived_keys = figures.select { |f| rederive(f, by_key) }.map { |f| f['key'] }
      added = figures_added(by_key)
      @derived_keys += added.map { |f| f['key'] }
      @doc.merge('figures' => figures + added)
    end

    # The keys of the figures derive could derive again (after #derived).
    def derived_keys
      derived if @derived_keys.nil?
      @derived_keys
    end

    # [key, committed, derived] for each figure whose value differs beyond the
    # committed value's own rounding.
    def differences
      committed = @doc['figures'].to_h { |f| [f['key'], f['value']] }
      derived['figures'].filter_map do |f|
        was = committed[f['key']]
        [f['key'], was, f['value']] unless same_within_rounding?(was, f['value'])
      end
    end

    def self.same_within_rounding?(was, now)
      return was == now if was.nil? || now.nil?

      places = was.to_s[%r{\.(\d+)\z}, 1].to_s.size
      # Half a unit of the committed value's last decimal: it was printed from a
      # value at most that far off.
      (Float(now) - Float(was)).abs <= ((10.0**-places) / 2) + 1e-9
    end

    private

    def same_within_rounding?(was, now)
      self.class.same_within_rounding?(was, now)
    end

    def rederive(fig, by_key)
      return rederive_checkin(fig) if CheckinFigures::KEYS.include?(fig['key'])

      value = derive_value(fig, by_key)
      return false if value.nil?

      fig['value'] = value
      judge(fig) if JUDGED_KEYS.include?(fig['key'])
      true
    end

    def derive_value(fig, by_key)
      key = fig['key']
      return median_from_note(fig) if MEDIAN_KEYS.match?(key)

      share = key[%r{\Anoop_class_share_(\d+)\z}, 1]
      return difference(by_key["noop_apply_#{share}"], by_key["empty_apply_#{share}"]) if share

      FROM_RAW.key?(key) ? instance_exec(by_key, &FROM_RAW[key]) : nil
    end

    # The figures made from one raw file or from other figures.
    FROM_RAW = {
      'cpu_ratio' => ->(by_key) { quotient(by_key['cpu_clone'], by_key['cpu_plain']) },
      'cpu_cache_ratio' => ->(by_key) { quotient(by_key['cpu_clone'], by_key['cpu_clone_uncached']) },
      'pss_timer' => ->(_) { pss_average('pss-timer-idle') },
      'pss_daemon' => ->(_) { pss_average('pss-daemon') },
      'fleet_pss' => ->(_) { pss_total('pss-timer') },
      'grow_flat' => ->(by_key) { grow_flat(by_key) },
      'grow_slope' => ->(by_key) { grow_fit(by_key)&.dig('grow_slope', 'value') },
      'grow_fitted_max' => ->(by_key) { grow_fit(by_key)&.dig('grow_fitted_max', 'value') },
      'phasing' => ->(_) { phasing },
    }.freeze

    # A checkin figure, made again from the raw data as of the time the run made
    # it (the third word of raw/times): its value and whether it met its target.
    def rederive_checkin(fig)
      @checkin ||= checkin_figures
      again = @checkin[fig['key']]
      return false unless again

      fig['value'] = again['value']
      fig['met'] = again['met']
      true
    end

    # The figures the code which ran a checkin or growth result did not make yet
    # (added to the bench since): made from its raw data or its other figures like
    # the rest, after them.
    def figures_added(by_key)
      made = case @doc.dig('scale', 'bench')
             when 'checkin' then @checkin ||= checkin_figures
             when 'growth' then grow_fit(by_key) || {}
             else {}
             end
      made.values.reject { |f| by_key.key?(f['key']) }
    end

    def checkin_figures
      raw = CheckinRaw.read(@raw)
      upto = CheckinRaw.figures_at(raw.times)
      return {} unless upto

      CheckinFigures.figures(raw, @doc['scale'], upto).to_h { |f| [f['key'], f] }
    end

    def median_from_note(fig)
      runs = fig['note'].to_s[RUNS_NOTE, 1]
      # Results from before the bench required MIN_MEDIAN_RUNS quote fewer: they are
      # re-derived as they were measured, not judged again.
      runs && Float(Stats.fixed(Stats.median(runs.split, min: 1)))
    end

    def difference(left, right)
      return nil unless left && right

      Float(Stats.fixed(median_from_note(left) - median_from_note(right)))
    end

    def quotient(num, den)
      return nil unless num && den

      Float(Stats.fixed(median_from_note(num) / median_from_note(den)))
    end

    def raw(name)
      CheckinRaw.kept(@raw, name)
    end

    def pss_average(name)
      text = raw(name)
      text && Pss.average_mib(Pss.parse(text))
    end

    def pss_total(name)
      text = raw(name)
      text && Pss.total_mib(Pss.parse(text))
    end

    # The growth's batches: [clones running before, seconds per clone], in order.
    def grow_batches(by_key)
      by_key.keys.grep(%r{\Agrow_\d+\z}).map { |k| [Integer(k[5..]), by_key[k]['value']] }.sort
    end

    # The last batch's seconds per clone over the first's, as measured.
    def grow_flat(by_key)
      batches = grow_batches(by_key)
      return nil if batches.size < 2

      first = batches.first[1]
      last = batches.last[1]
      first && last ? Float(Stats.fixed(last / first)) : nil
    end

    # The growth's fitted line (Growth.fit_figures) through the committed batches, by
    # key; nil without batches or with one not measured.
    def grow_fit(by_key)
      batches = grow_batches(by_key)
      return nil unless measured?(batches)

      booted = batches.all? { |running, _| all_booted?(by_key["grow_#{running}"]) }
      Growth.fit_figures(batches.map(&:first), batches.map(&:last), all_booted: booted).to_h { |f| [f['key'], f] }
    end

    def measured?(batches)
      !batches.empty? && batches.none? { |_, secs| secs.nil? }
    end

    # Whether a batch's note says every clone of it booted.
    def all_booted?(fig)
      m = Batch::BOOTED_READ.match(fig['note'].to_s)
      !m.nil? && m[1] == m[2]
    end

    # Only with the run's times kept (raw/times: "apply_t0 fleet_t0 checkin_end"),
    # which results before the bench kept them lack.
    def phasing
      times = raw('times')
      starts = raw('reports')
      return nil unless times && starts

      fleet_t0 = Float(times.split[1])
      interval = Float(@doc['scale']['runinterval'])
      parsed = starts.each_line.map(&:split).reject(&:empty?).map { |c, t| [c, Float(t)] }
      Runs.phasing(parsed, fleet_t0 + interval, interval)[:share]
    end

    # A figure whose target is a threshold is judged again; others keep their met.
    def judge(fig)
      met = Stats.meets(fig['value'], fig['target'])
      fig['met'] = met unless met.nil?
    end
  end
end
