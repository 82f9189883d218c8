# frozen_string_literal: true

require 'json'
require_relative 'stats'

module CloneArmyBench
  # Several runs of one bench side by side: for each figure that every run has a
  # value for, its value in each run, their median and the median judged against
  # the figure's target. A bench figure is quoted so: the median of at least
  # Stats::MIN_MEDIAN_RUNS runs, with every run beside it.
  class Across
    Row = Struct.new(:key, :label, :unit, :target, :runs, :median, :met, keyword_init: true)

    attr_reader :stamps

    # prefixes: bench/results/<stamp> of each run (a trailing .json is dropped).
    def initialize(prefixes)
      min = Stats::MIN_MEDIAN_RUNS
      raise ArgumentError, "across needs at least #{min} results, got #{prefixes.size}" if prefixes.size < min

      @stamps = prefixes.map { |p| File.basename(p.sub(%r{\.json\z}, '')) }
      @docs = prefixes.map { |p| JSON.parse(File.read("#{p.sub(%r{\.json\z}, '')}.json")) }
      benches = @docs.map { |d| d.dig('scale', 'bench') || 'fleet' }.uniq
      raise ArgumentError, "the results are of different benches (#{benches.join(', ')}); give runs of one" if benches.size > 1
    end

    # One row per figure with a number in every run, in the first run's order.
    def rows
      by_run = @docs.map { |d| d['figures'].to_h { |f| [f['key'], f] } }
      @docs.first['figures'].filter_map do |fig|
        runs = by_run.map { |figs| figs.dig(fig['key'], 'value') }
        next unless runs.all?(Numeric)

        median = median_of(runs)
        Row.new(key: fig['key'], label: fig['label'], unit: fig['unit'], target: fig['target'],
                runs: runs, median: median, met: Stats.meets(median, fig['target']))
      end
    end

    def markdown
      met = { true => 'yes', false => '**no**', nil => '–' }
      head = "| figure | #{@stamps.join(' | ')} | median | target | met |\n|#{' --- |' * (@stamps.size + 4)}\n"
      head + rows.map do |r|
        "| #{r.label} (`#{r.key}`) | #{r.runs.map { |v| "#{v} #{r.unit}".strip }.join(' | ')} | " \
          "#{"#{r.median} #{r.unit}".strip} | #{r.target} | #{met.fetch(r.met)} |\n"
      end.join
    end

    def json
      "#{JSON.pretty_generate('results' => @stamps, 'figures' => rows.map(&:to_h))}\n"
    end

    private

    # Rounded as the bench prints; a median of whole counts stays whole.
    def median_of(runs)
      median = Float(Stats.fixed(Stats.median(runs)))
      runs.all?(Integer) && median == median.floor ? Integer(median) : median
    end
  end
end
